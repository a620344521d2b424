"""Expression graph: immutable, hash-consed nodes; shapes, broadcasting and views."""

from .node import Node, const, leaf, make, realized_leaf
from .shapes import broadcast_shapes

__all__ = ["Node", "const", "leaf", "make", "realized_leaf", "broadcast_shapes"]
