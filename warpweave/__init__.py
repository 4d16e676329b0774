"""warpweave: provably optimal software pipelining jointly with warp specialization."""

__version__ = "0.1.0"
