"""GAN training loops."""
