"""Images as a data kind: checks, ``.npz``/PNG-folder I/O and contact sheets (the facade lives in synthesizers).

Its names load on first use (dpgan.lazy)."""

from dpgan.lazy import lazy_names

_PLACES = {
    "ImageSet": "dpgan.images.checks",
    "check_images": "dpgan.images.reading",
    "to_uint8": "dpgan.images.checks",
    "to_unit_range": "dpgan.images.checks",
    "read_images": "dpgan.images.io",
    "open_images": "dpgan.images.stream",
    "write_images": "dpgan.images.io",
    "write_contact_sheet": "dpgan.images.sheet",
}
__getattr__ = lazy_names(__name__, _PLACES)
__all__ = sorted(_PLACES)
