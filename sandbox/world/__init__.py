"""The sandbox's world (placeholder docstring, completed below)."""

from .api import Listing, Record, World, WorldError
from .world import SyntheticWorld

__all__ = ["Listing", "Record", "SyntheticWorld", "World", "WorldError"]
