"""The entity kind's GAN model ("gan"): DoppelGANger's shape (attributes, then an LSTM emitting events
with an end flag) trained through the engine's one private step with the entity as the clipped unit."""
