"""Images as a data kind: checks, ``.npz``/PNG-folder I/O and contact sheets (the facade lives in synthesizers)."""

from dpgan.images.checks import ImageSet, check_images, to_uint8, to_unit_range
from dpgan.images.io import read_images, write_images
from dpgan.images.sheet import write_contact_sheet

__all__ = [
    "ImageSet",
    "check_images",
    "read_images",
    "to_uint8",
    "to_unit_range",
    "write_contact_sheet",
    "write_images",
]
