"""Images as a kind of the registry (dpgan.kinds): the words, the facade, the command line's
functions and flags, the loop's defaults the help states, inspect's line and the audit. Loading
this module loads nothing else: every name below is an import path, loaded on first use."""

from __future__ import annotations

from dpgan.kinds import Kind, register

# the loop's defaults of an image GAN (IMAGE_DEFAULTS over TrainingConfig's; pinned by tests/cli/test_cli_help.py)
IMAGE_LOOP = {"epochs": 200.0, "batch_size": 1024, "max_steps": 0, "max_examples": 1_024_000}

IMAGE = register(
    Kind(
        name="image",
        order=30,
        facade="dpgan.synthesizers.image:ImageSynthesizer",
        description="images (an .npz or a folder of PNGs)",
        noun="images",
        units="images",
        unit_of_privacy="one image with its label (add or remove one image)",
        section=(
            "images",
            "images (--kind image)",
            "an .npz (arrays 'images' [+ 'labels']), an .npy [+ NAME.labels.npy] or a folder of PNGs",
        ),
        fit="dpgan.cli.images:fit_image",
        sample="dpgan.cli.images:sample_command",
        evaluate="dpgan.cli.images:evaluate_image",
        settings=("dpgan.images.settings:ImageSettings",),
        models="dpgan.recipes.images:IMAGE_MODELS",
        flags=("recipe", "classes", "unconditional", "image_shape", "pixel_range"),
        add_flags="dpgan.cli.images:add_fit_flags",
        loop_defaults=IMAGE_LOOP,
        loop_words="image GANs",
        inspect_line="recipe: {recipe}; unit of privacy: {unit_of_privacy}",
        audit="dpgan.evaluation.audit.target:image_model_target",
        distributed=True,  # the gaussian model on a folder or .npy read in blocks (dpgan.images.stream_run)
    )
)
