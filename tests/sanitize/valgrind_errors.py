#!/usr/bin/env python3
"""Sorts the errors of valgrind memcheck XML logs into strata's and others'.

An error is strata's when the innermost frame of its stack that is not in
the C library, the dynamic loader or valgrind's own preload (memcpy, malloc,
syscall wrappers) lies in an object under OWNED (the build directory:
libstrata.so and the test programs).  A leak counts the same way, from the
function that called the allocator.  Errors the suppression file did not
catch and that are not strata's belong to the host MPI or the system: they
are listed, but do not fail the check.

    valgrind_errors.py OWNED LOG.xml...
Exit status: 0 when no error is strata's, 1 when one is, 2 when a log is
missing or unreadable (a rank that died before valgrind finished)."""
import os
import sys
import xml.etree.ElementTree as ET

SYSTEM = ("vgpreload_", "/libc.so", "/libc-", "/ld-linux", "/libpthread")


def frames(error):
    stack = error.find("stack")
    return [] if stack is None else stack.findall("frame")


def describe(frame):
    fn = frame.findtext("fn") or "???"
    where = frame.findtext("file")
    if where:
        return "%s (%s:%s)" % (fn, where, frame.findtext("line") or "?")
    return "%s (%s)" % (fn, frame.findtext("obj") or "unknown object")


def is_strata(error, owned):
    for frame in frames(error):
        obj = frame.findtext("obj") or ""
        if any(s in obj for s in SYSTEM):
            continue
        return os.path.realpath(obj).startswith(owned) if obj else False
    return False


def what(error):
    text = error.findtext("what")
    if text is None:
        text = error.findtext("xwhat/text") or error.findtext("kind")
    return text


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    owned = os.path.realpath(argv[1]) + os.sep
    strata, others, status = [], [], 0
    for path in argv[2:]:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            print("valgrind log %s unreadable (%s): did the rank finish?" % (path, e))
            status = 2
            continue
        for error in root.findall("error"):
            (strata if is_strata(error, owned) else others).append((path, error))
    for path, error in strata:
        print("strata's error (%s): %s" % (os.path.basename(path), what(error)))
        for frame in frames(error)[:16]:
            print("    " + describe(frame))
        for aux in error.findall("auxwhat"):
            print("  " + (aux.text or ""))
    if others:
        print("%d error(s) outside strata not covered by tests/sanitize/valgrind.supp "
              "(not failing); the first:" % len(others))
        path, error = others[0]
        print("  %s: %s" % (os.path.basename(path), what(error)))
        for frame in frames(error)[:12]:
            print("    " + describe(frame))
    if strata:
        print("%d error(s) in strata's code" % len(strata))
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
