/* A strict JSON reader (json.h): recursive descent over the whole text,
 * one heap node per value. */
#include "util/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper nesting is surely a mistake in a configuration file, and the
 * recursion must not run off the stack. */
#define MAX_DEPTH 64
/* Configuration files are small; refuse to slurp something that is not one. */
#define MAX_FILE_BYTES (16u << 20)

struct parser {
    const unsigned char *at, *end;
    const unsigned char *line_start; /* for columns */
    int line;
    int depth;
    char *err;
    size_t errlen;
    int failed;
};

static void fail(struct parser *ps, const unsigned char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the first error only: later ones are consequences of it. */
static void fail(struct parser *ps, const unsigned char *where, const char *fmt, ...)
{
    if (ps->failed) return;
    ps->failed = 1;
    int n = snprintf(ps->err, ps->errlen, "line %d, column %d: ", ps->line,
                     (int)(where - ps->line_start) + 1);
    if (n < 0 || (size_t)n >= ps->errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

/* "unexpected 'x'", "unexpected end of text", ... at the current position. */
static void fail_unexpected(struct parser *ps, const char *expected)
{
    if (ps->at == ps->end) fail(ps, ps->at, "unexpected end of text, expected %s", expected);
    else if (*ps->at >= 0x20 && *ps->at < 0x7f)
        fail(ps, ps->at, "unexpected '%c', expected %s", *ps->at, expected);
    else fail(ps, ps->at, "unexpected byte 0x%02x, expected %s", *ps->at, expected);
}

static void skip_space(struct parser *ps)
{
    for (; ps->at < ps->end; ps->at++) {
        if (*ps->at == '\n') {
            ps->line++;
            ps->line_start = ps->at + 1;
        } else if (*ps->at != ' ' && *ps->at != '\t' && *ps->at != '\r') {
            return;
        }
    }
}

static struct strata_json *new_node(struct parser *ps, enum strata_json_type type)
{
    struct strata_json *v = calloc(1, sizeof *v);
    if (!v) {
        fail(ps, ps->at, "out of memory");
        return NULL;
    }
    v->type = type;
    v->line = ps->line;
    v->column = (int)(ps->at - ps->line_start) + 1;
    return v;
}

void strata_json_free(struct strata_json *v)
{
    while (v) {
        struct strata_json *next = v->next;
        strata_json_free(v->child);
        free(v->key);
        free(v->string);
        free(v);
        v = next;
    }
}

/* Bytes of the valid UTF-8 sequence at s (lead byte >= 0x80), or 0.  The
 * ranges exclude overlong forms, surrogates and code points past U+10FFFF. */
static int utf8_sequence(const unsigned char *s, const unsigned char *end)
{
    unsigned char lo = 0x80, hi = 0xbf;
    int n;
    if (*s >= 0xc2 && *s <= 0xdf) n = 2;
    else if (*s >= 0xe0 && *s <= 0xef) {
        n = 3;
        if (*s == 0xe0) lo = 0xa0;
        if (*s == 0xed) hi = 0x9f;
    } else if (*s >= 0xf0 && *s <= 0xf4) {
        n = 4;
        if (*s == 0xf0) lo = 0x90;
        if (*s == 0xf4) hi = 0x8f;
    } else return 0;
    if (end - s < n || s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return n;
}

/* A growing output buffer for a decoded string. */
struct text {
    char *s;
    size_t len, cap;
};

static int put(struct text *t, const void *bytes, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        while (cap < t->len + n + 1) cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) return -1;
        t->s = s;
        t->cap = cap;
    }
    memcpy(t->s + t->len, bytes, n);
    t->len += n;
    t->s[t->len] = 0;
    return 0;
}

static int put_code_point(struct text *t, unsigned long cp)
{
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) b[0] = (unsigned char)cp, n = 1;
    else if (cp < 0x800) b[0] = (unsigned char)(0xc0 | cp >> 6), n = 2;
    else if (cp < 0x10000) b[0] = (unsigned char)(0xe0 | cp >> 12), n = 3;
    else b[0] = (unsigned char)(0xf0 | cp >> 18), n = 4;
    for (size_t i = 1; i < n; i++)
        b[i] = (unsigned char)(0x80 | ((cp >> (6 * (n - 1 - i))) & 0x3f));
    return put(t, b, n);
}

/* The 4 hex digits after "\u" at ps->at; -1 (with the error) if not hex. */
static long hex4(struct parser *ps)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        const unsigned char *c = ps->at + i;
        int d = c >= ps->end ? -1
              : *c >= '0' && *c <= '9' ? *c - '0'
              : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10
              : *c >= 'A' && *c <= 'F' ? *c - 'A' + 10 : -1;
        if (d < 0) {
            fail(ps, ps->at - 2, "\\u must be followed by 4 hexadecimal digits");
            return -1;
        }
        v = v * 16 + d;
    }
    ps->at += 4;
    return v;
}

/* The escape after a backslash (ps->at is past it). */
static int parse_escape(struct parser *ps, struct text *t)
{
    const unsigned char *start = ps->at - 1;
    if (ps->at == ps->end) {
        fail(ps, start, "unterminated string");
        return -1;
    }
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *hit = *ps->at ? strchr(from, *ps->at) : NULL;
    if (hit) {
        ps->at++;
        return put(t, &to[hit - from], 1);
    }
    if (*ps->at != 'u') {
        fail(ps, start, "unknown escape; JSON accepts \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
        return -1;
    }
    ps->at++;
    long cp = hex4(ps);
    if (cp < 0) return -1;
    if (cp >= 0xdc00 && cp <= 0xdfff) {
        fail(ps, start, "\\u%04lx is the second half of a surrogate pair, without the first",
             cp);
        return -1;
    }
    if (cp >= 0xd800 && cp <= 0xdbff) {
        if (ps->end - ps->at < 2 || ps->at[0] != '\\' || ps->at[1] != 'u') {
            fail(ps, start, "\\u%04lx must be followed by the second half of its surrogate pair",
                 cp);
            return -1;
        }
        ps->at += 2;
        long low = hex4(ps);
        if (low < 0) return -1;
        if (low < 0xdc00 || low > 0xdfff) {
            fail(ps, start, "\\u%04lx must be followed by a \\udc00 to \\udfff escape", cp);
            return -1;
        }
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    }
    if (cp == 0) {
        fail(ps, start, "\\u0000 is not accepted (strings here cannot hold a NUL)");
        return -1;
    }
    return put_code_point(t, (unsigned long)cp);
}

/* A string starting at the quote at ps->at; NULL (with the error) if bad. */
static char *parse_string_text(struct parser *ps)
{
    const unsigned char *open = ps->at++;
    struct text t = {0};
    if (put(&t, "", 0)) goto oom;
    for (;;) {
        if (ps->at == ps->end) {
            fail(ps, open, "unterminated string");
            break;
        }
        unsigned char c = *ps->at;
        if (c == '"') {
            ps->at++;
            return t.s;
        }
        if (c == '\\') {
            ps->at++;
            if (parse_escape(ps, &t)) {
                if (!ps->failed) goto oom;
                break;
            }
        } else if (c < 0x20) {
            if (c == '\n') fail(ps, ps->at, "unterminated string (a line ends inside it)");
            else fail(ps, ps->at, "control character 0x%02x in a string: write it as an escape",
                      c);
            break;
        } else {
            int n = c < 0x80 ? 1 : utf8_sequence(ps->at, ps->end);
            if (!n) {
                fail(ps, ps->at, "invalid UTF-8 in a string");
                break;
            }
            if (put(&t, ps->at, (size_t)n)) goto oom;
            ps->at += n;
        }
    }
    free(t.s);
    return NULL;
oom:
    fail(ps, ps->at, "out of memory");
    free(t.s);
    return NULL;
}

static int is_digit(const unsigned char *c, const unsigned char *end)
{
    return c < end && *c >= '0' && *c <= '9';
}

static struct strata_json *parse_number(struct parser *ps)
{
    const unsigned char *start = ps->at, *c = ps->at;
    if (*c == '-') c++;
    if (!is_digit(c, ps->end)) {
        fail(ps, start, "a number needs a digit after '-'");
        return NULL;
    }
    if (*c == '0' && is_digit(c + 1, ps->end)) {
        fail(ps, start, "numbers cannot start with 0 (JSON has no octal)");
        return NULL;
    }
    while (is_digit(c, ps->end)) c++;
    int integral = 1;
    if (c < ps->end && *c == '.') {
        integral = 0;
        if (!is_digit(++c, ps->end)) {
            fail(ps, start, "a number needs a digit after '.'");
            return NULL;
        }
        while (is_digit(c, ps->end)) c++;
    }
    if (c < ps->end && (*c == 'e' || *c == 'E')) {
        integral = 0;
        c++;
        if (c < ps->end && (*c == '+' || *c == '-')) c++;
        if (!is_digit(c, ps->end)) {
            fail(ps, start, "a number needs a digit in its exponent");
            return NULL;
        }
        while (is_digit(c, ps->end)) c++;
    }
    /* strtod and strtoll need a terminated copy. */
    size_t len = (size_t)(c - start);
    char small[64], *copy = len < sizeof small ? small : malloc(len + 1);
    struct strata_json *v = copy ? new_node(ps, STRATA_JSON_NUMBER) : NULL;
    if (!v) {
        if (copy != small) free(copy);
        if (!copy) fail(ps, start, "out of memory");
        return NULL;
    }
    memcpy(copy, start, len);
    copy[len] = 0;
    v->number = strtod(copy, NULL);
    if (integral) {
        errno = 0;
        v->integer = strtoll(copy, NULL, 10);
        v->is_integer = errno == 0;
        if (!v->is_integer) v->integer = 0;
    }
    if (copy != small) free(copy);
    if (!isfinite(v->number)) {
        fail(ps, start, "number out of range");
        free(v);
        return NULL;
    }
    ps->at = c;
    return v;
}

static struct strata_json *parse_value(struct parser *ps);

/* The elements of an array or the members of an object, after its opening
 * bracket, up to and including its closing one. */
static struct strata_json *parse_container(struct parser *ps, enum strata_json_type type)
{
    const int is_object = type == STRATA_JSON_OBJECT;
    const char close = is_object ? '}' : ']';
    struct strata_json *v = new_node(ps, type), **tail;
    if (!v) return NULL;
    if (++ps->depth > MAX_DEPTH) {
        fail(ps, ps->at, "nested deeper than %d levels", MAX_DEPTH);
        goto bad;
    }
    ps->at++;
    skip_space(ps);
    if (ps->at < ps->end && *ps->at == close) {
        ps->at++;
        ps->depth--;
        return v;
    }
    for (tail = &v->child;; tail = &(*tail)->next) {
        char *key = NULL;
        const unsigned char *key_at = ps->at; /* strings hold no newline: same line */
        int key_line = ps->line, key_column = (int)(key_at - ps->line_start) + 1;
        if (is_object) {
            if (ps->at == ps->end || *ps->at != '"') {
                fail_unexpected(ps, "a member name in double quotes");
                goto bad;
            }
            if (!(key = parse_string_text(ps))) goto bad;
            for (const struct strata_json *m = v->child; m; m = m->next)
                if (!strcmp(m->key, key)) {
                    fail(ps, key_at, "duplicate member \"%s\"", key);
                    free(key);
                    goto bad;
                }
            skip_space(ps);
            if (ps->at == ps->end || *ps->at != ':') {
                free(key);
                fail_unexpected(ps, "':' after the member name");
                goto bad;
            }
            ps->at++;
            skip_space(ps);
        }
        *tail = parse_value(ps);
        if (!*tail) {
            free(key);
            goto bad;
        }
        (*tail)->key = key;
        if (key) (*tail)->line = key_line, (*tail)->column = key_column;
        v->count++;
        skip_space(ps);
        if (ps->at < ps->end && *ps->at == close) break;
        if (ps->at == ps->end || *ps->at != ',') {
            fail_unexpected(ps, is_object ? "',' or '}' after an object member"
                                          : "',' or ']' after an array element");
            goto bad;
        }
        ps->at++;
        skip_space(ps);
        if (ps->at < ps->end && *ps->at == close) {
            fail(ps, ps->at, "trailing comma before '%c'", close);
            goto bad;
        }
    }
    ps->at++;
    ps->depth--;
    return v;
bad:
    strata_json_free(v);
    return NULL;
}

static struct strata_json *parse_literal(struct parser *ps, const char *word,
                                         enum strata_json_type type)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->at) < n || memcmp(ps->at, word, n)) {
        fail(ps, ps->at, "not a value (did you mean %s? strings need double quotes)", word);
        return NULL;
    }
    struct strata_json *v = new_node(ps, type);
    if (v) ps->at += n;
    return v;
}

static struct strata_json *parse_value(struct parser *ps)
{
    if (ps->at == ps->end) {
        fail_unexpected(ps, "a value");
        return NULL;
    }
    switch (*ps->at) {
    case '{': return parse_container(ps, STRATA_JSON_OBJECT);
    case '[': return parse_container(ps, STRATA_JSON_ARRAY);
    case 't': return parse_literal(ps, "true", STRATA_JSON_TRUE);
    case 'f': return parse_literal(ps, "false", STRATA_JSON_FALSE);
    case 'n': return parse_literal(ps, "null", STRATA_JSON_NULL);
    case '"': {
        struct strata_json *v = new_node(ps, STRATA_JSON_STRING);
        if (v && !(v->string = parse_string_text(ps))) {
            free(v);
            return NULL;
        }
        return v;
    }
    default:
        if (*ps->at == '-' || is_digit(ps->at, ps->end)) return parse_number(ps);
        fail_unexpected(ps, "a value");
        return NULL;
    }
}

struct strata_json *strata_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    struct parser ps = {(const unsigned char *)text, (const unsigned char *)text + len,
                        (const unsigned char *)text, 1, 0, err, errlen, 0};
    /* A byte-order mark is no part of the text (RFC 8259 8.1 lets readers
     * ignore it); editors on some systems write one. */
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) ps.at += 3, ps.line_start += 3;
    skip_space(&ps);
    struct strata_json *v = parse_value(&ps);
    if (!v) return NULL;
    skip_space(&ps);
    if (ps.at != ps.end) {
        fail(&ps, ps.at, "text after the end of the top-level value");
        strata_json_free(v);
        return NULL;
    }
    return v;
}

struct strata_json *strata_json_parse_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot be opened: %s", path, strerror(errno));
        return NULL;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            char *t = cap <= MAX_FILE_BYTES + 1 ? realloc(text, cap) : NULL;
            if (!t) {
                snprintf(err, errlen, "%s: %s", path, cap > MAX_FILE_BYTES + 1
                         ? "larger than 16 MiB: not a configuration file" : "out of memory");
                goto fail;
            }
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: cannot be read: %s", path, strerror(errno));
        goto fail;
    }
    fclose(f);
    char why[512];
    struct strata_json *v = strata_json_parse(text, len, why, sizeof why);
    free(text);
    if (!v) snprintf(err, errlen, "%s: %s", path, why);
    return v;
fail:
    free(text);
    fclose(f);
    return NULL;
}

const struct strata_json *strata_json_get(const struct strata_json *obj, const char *key)
{
    if (!obj || obj->type != STRATA_JSON_OBJECT) return NULL;
    for (const struct strata_json *m = obj->child; m; m = m->next)
        if (!strcmp(m->key, key)) return m;
    return NULL;
}

const char *strata_json_type_name(enum strata_json_type type)
{
    switch (type) {
    case STRATA_JSON_NULL: return "null";
    case STRATA_JSON_FALSE: return "false";
    case STRATA_JSON_TRUE: return "true";
    case STRATA_JSON_NUMBER: return "a number";
    case STRATA_JSON_STRING: return "a string";
    case STRATA_JSON_ARRAY: return "an array";
    case STRATA_JSON_OBJECT: return "an object";
    }
    return "a value";
}
