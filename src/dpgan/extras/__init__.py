"""Tabular extras that are not GAN training: post-processors of a fitted generator's output.

Each reads only DP outputs (its own DP-SGD release, charged to the ledger through the private
step) and public metadata, so it may import the tabular data kind; training/ may not.
"""
