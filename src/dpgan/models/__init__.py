"""Generator and discriminator networks."""
