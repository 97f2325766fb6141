"""The spec's shapes now live in `sandbox/spec_shapes/` (the drift injector reads them at run time).

Re-exported here so the tests keep importing `spec_shapes` as before.
"""

from sandbox.spec_shapes import *  # noqa: F403
from sandbox.spec_shapes import Enum, Opt, problems  # noqa: F401
