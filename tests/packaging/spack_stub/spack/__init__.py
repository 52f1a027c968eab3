"""A small stub of Spack's package API (spack.package), enough to import and
exercise packaging/spack/package.py without Spack (tests/packaging/
test_spack_recipe.py).  Directives record what they declare in DECLARED."""
