/* A small, strict JSON reader (RFC 8259) for strata's configuration files:
 * the whole text is parsed into a tree of values, each remembering where it
 * started so that a caller checking the tree's meaning can point at the
 * offending value.  Strict: no comments, no trailing commas, no leading
 * zeros, no control characters in strings, valid UTF-8 only, no duplicate
 * keys, nothing after the top value.  Errors say "line L, column C: what";
 * columns count bytes from 1. */
#ifndef STRATA_JSON_H
#define STRATA_JSON_H

#include <stddef.h>

/* If you add a value here, also update strata_json_type_name (json.c) and the
 * parser and writer there. */
enum strata_json_type {
    STRATA_JSON_NULL,
    STRATA_JSON_FALSE,
    STRATA_JSON_TRUE,
    STRATA_JSON_NUMBER,
    STRATA_JSON_STRING,
    STRATA_JSON_ARRAY,
    STRATA_JSON_OBJECT,
};

struct strata_json {
    enum strata_json_type type;
    int line, column;            /* where it starts: an object member at its key */
    char *key;                   /* a member of an object: its key, else NULL */
    double number;               /* NUMBER */
    int is_integer;              /* NUMBER written without fraction or exponent, */
    long long integer;           /* ... fitting in a long long: its exact value */
    char *string;                /* STRING: decoded UTF-8 (never holds a NUL) */
    int count;                   /* ARRAY, OBJECT: elements or members */
    struct strata_json *child;   /* ARRAY, OBJECT: the first of them */
    struct strata_json *next;    /* the next element or member of the parent */
};

/* Parses text[0..len).  NULL with "line L, column C: problem" in err. */
struct strata_json *strata_json_parse(const char *text, size_t len, char *err, size_t errlen);

/* Reads and parses a file.  NULL with "path: line L, column C: problem" (or
 * "path: why it cannot be read") in err. */
struct strata_json *strata_json_parse_file(const char *path, char *err, size_t errlen);

void strata_json_free(struct strata_json *v);

/* The member of object obj called key, or NULL (also when obj is no object). */
const struct strata_json *strata_json_get(const struct strata_json *obj, const char *key);

/* "a string", "an object", ... for messages. */
const char *strata_json_type_name(enum strata_json_type type);

#endif
