"""Stub of spack.package: the names a CMake-built MPI tool recipe uses.

Directives (version, variant, depends_on, conflicts, maintainers) append
(name, args, kwargs) to DECLARED, in order; run_after marks a method.
CMakePackage.define follows Spack's: -DNAME:BOOL=ON/OFF for bools,
-DNAME:STRING=value otherwise."""
import os
from os.path import join as join_path  # Spack's join_path is os.path.join

DECLARED = []


def _directive(name):
    def record(*args, **kwargs):
        DECLARED.append((name, args, kwargs))
    record.__name__ = name
    return record


version = _directive("version")
variant = _directive("variant")
depends_on = _directive("depends_on")
conflicts = _directive("conflicts")
maintainers = _directive("maintainers")
provides = _directive("provides")
patch = _directive("patch")


def run_after(phase, when=None):
    def mark(fn):
        fn.run_after = phase
        return fn
    return mark


class InstallError(Exception):
    pass


class Prefix(str):
    """Spack's Prefix: attribute access joins path components."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Prefix(os.path.join(self, name))


class PackageBase:
    def __init__(self, spec, prefix):
        self.spec = spec
        self.prefix = Prefix(prefix)


class CMakePackage(PackageBase):
    build_system_class = "CMakePackage"

    @staticmethod
    def define(name, value):
        if isinstance(value, bool):
            return "-D{0}:BOOL={1}".format(name, "ON" if value else "OFF")
        return "-D{0}:STRING={1}".format(name, value)


__all__ = [n for n in dir() if not n.startswith("_") and n != "DECLARED"] + ["os"]
