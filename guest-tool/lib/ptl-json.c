/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small strict JSON parser (RFC 8259) for saved readings.
 *
 * Strict: one value, no comments, no trailing commas, no NaN or Infinity,
 * no leading zeros, no control characters or invalid UTF-8 in strings, no
 * lone surrogates, no duplicate keys, and \u0000 is refused (strings are
 * NUL-terminated). Bounded: at most PTL_JSON_MAX_DEPTH nested containers
 * (the recursion is that deep at most) and PTL_JSON_MAX_VALUES values,
 * whatever the input. Every error names its line and column (1-based,
 * columns in bytes) and frees what was built.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-telemetry.h"

typedef struct parser {
    const char *p, *end;
    unsigned line;
    const char *line_start;     /* where the line starts in the text */
    unsigned col_base;          /* columns before the text on its line */
    size_t values;
    ptl_error *err;
    bool failed;
} parser;

static unsigned column(const parser *ps, const char *at)
{
    return (unsigned)(at - ps->line_start) + 1 + ps->col_base;
}

static bool __attribute__((format(printf, 3, 4)))
fail_at(parser *ps, const char *at, const char *fmt, ...)
{
    char what[256];
    va_list ap;

    if (ps->failed) {
        return false;
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    ptl_set_error(ps->err, PTL_E_USAGE, "line %u, column %u: %s", ps->line,
                  column(ps, at), what);
    ps->failed = true;
    return false;
}

/* What is at p, for messages: a character, or "the end". */
static const char *found(const parser *ps, const char *p, char *buf,
                         size_t len)
{
    unsigned char c;

    if (p >= ps->end) {
        return "the end of the input";
    }
    c = (unsigned char)*p;
    if (c >= 0x20 && c < 0x7F) {
        snprintf(buf, len, "'%c'", c);
    } else {
        snprintf(buf, len, "byte 0x%02x", c);
    }
    return buf;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end) {
        char c = *ps->p;

        if (c == '\n') {
            ps->line++;
            ps->line_start = ps->p + 1;
            ps->col_base = 0;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        ps->p++;
    }
}

static bool literal(parser *ps, const char *word)
{
    size_t n = strlen(word);

    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) {
        char buf[16];

        return fail_at(ps, ps->p, "unexpected %s",
                       found(ps, ps->p, buf, sizeof(buf)));
    }
    ps->p += n;
    return true;
}

static bool is_digit(const parser *ps, const char *p)
{
    return p < ps->end && *p >= '0' && *p <= '9';
}

static bool parse_number(parser *ps, ptl_json *v)
{
    const char *start = ps->p, *p = ps->p;
    bool integer = true, neg = false;
    char small[64], *copy;
    size_t n;

    if (*p == '-') {
        neg = true;
        p++;
    }
    if (!is_digit(ps, p)) {
        return fail_at(ps, p, "a number needs a digit here");
    }
    if (*p == '0') {
        p++;
        if (is_digit(ps, p)) {
            return fail_at(ps, p, "a number has no leading zeros");
        }
    } else {
        while (is_digit(ps, p)) {
            p++;
        }
    }
    if (p < ps->end && *p == '.') {
        integer = false;
        p++;
        if (!is_digit(ps, p)) {
            return fail_at(ps, p, "a fraction needs a digit here");
        }
        while (is_digit(ps, p)) {
            p++;
        }
    }
    if (p < ps->end && (*p == 'e' || *p == 'E')) {
        integer = false;
        p++;
        if (p < ps->end && (*p == '+' || *p == '-')) {
            p++;
        }
        if (!is_digit(ps, p)) {
            return fail_at(ps, p, "an exponent needs a digit here");
        }
        while (is_digit(ps, p)) {
            p++;
        }
    }
    n = (size_t)(p - start);
    copy = n < sizeof(small) ? small : malloc(n + 1);
    if (!copy) {
        ptl_set_error(ps->err, PTL_E_INTERNAL, "out of memory");
        ps->failed = true;
        return false;
    }
    memcpy(copy, start, n);
    copy[n] = '\0';
    v->type = PTL_JSON_NUMBER;
    /* the grammar is checked; strtod only converts (ERANGE: +-HUGE_VAL
     * or a denormal, both still numbers) */
    v->number = strtod(copy, NULL);
    if (integer && !neg) {
        uint64_t u = 0;

        v->is_uint = true;
        for (size_t i = 0; i < n; i++) {
            unsigned d = (unsigned)(copy[i] - '0');

            if (u > (UINT64_MAX - d) / 10) {
                v->is_uint = false;
                break;
            }
            u = u * 10 + d;
        }
        v->uint = v->is_uint ? u : 0;
    }
    if (copy != small) {
        free(copy);
    }
    ps->p = p;
    return true;
}

static int hex4(const parser *ps, const char *p)
{
    int v = 0;

    if (ps->end - p < 4) {
        return -1;
    }
    for (int i = 0; i < 4; i++) {
        char c = p[i];

        v <<= 4;
        if (c >= '0' && c <= '9') {
            v |= c - '0';
        } else if (c >= 'a' && c <= 'f') {
            v |= c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            v |= c - 'A' + 10;
        } else {
            return -1;
        }
    }
    return v;
}

/* Length of the valid UTF-8 sequence at p (RFC 3629), or 0. */
static size_t utf8_len(const parser *ps, const unsigned char *p)
{
    const unsigned char *end = (const unsigned char *)ps->end;
    unsigned c = p[0];
    size_t n;
    unsigned min, cp;

    if (c < 0x80) {
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        n = 2, cp = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3, cp = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if ((size_t)(end - p) < n) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            return 0;
        }
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    return n;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/*
 * A string at ps->p (the opening quote), decoded into a new buffer. The
 * decoded text is never longer than the quoted one.
 */
static char *parse_string(parser *ps)
{
    const char *p = ps->p + 1, *q;
    char *out, *o;

    /* find the closing quote first: the buffer is at most that long */
    for (q = p; q < ps->end && *q != '"'; q++) {
        if (*q == '\\' && q + 1 < ps->end) {
            q++;
        }
    }
    if (q >= ps->end) {
        fail_at(ps, ps->p, "a string is not closed");
        return NULL;
    }
    out = malloc((size_t)(q - p) + 1);
    if (!out) {
        ptl_set_error(ps->err, PTL_E_INTERNAL, "out of memory");
        ps->failed = true;
        return NULL;
    }
    o = out;
    while (p < q) {
        unsigned char c = (unsigned char)*p;

        if (c == '\\') {
            int u, lo;

            switch (p[1]) {
            case '"':
            case '\\':
            case '/':
                *o++ = p[1];
                break;
            case 'b':
                *o++ = '\b';
                break;
            case 'f':
                *o++ = '\f';
                break;
            case 'n':
                *o++ = '\n';
                break;
            case 'r':
                *o++ = '\r';
                break;
            case 't':
                *o++ = '\t';
                break;
            case 'u':
                u = hex4(ps, p + 2);
                if (u < 0) {
                    fail_at(ps, p, "\\u needs 4 hex digits");
                    goto bad;
                }
                if (u == 0) {
                    fail_at(ps, p, "\\u0000 is not accepted in a string");
                    goto bad;
                }
                if (u >= 0xDC00 && u <= 0xDFFF) {
                    fail_at(ps, p, "a lone low surrogate");
                    goto bad;
                }
                if (u >= 0xD800 && u <= 0xDBFF) {
                    if (q - p < 12 || p[6] != '\\' || p[7] != 'u' ||
                        (lo = hex4(ps, p + 8)) < 0xDC00 || lo > 0xDFFF) {
                        fail_at(ps, p, "a high surrogate without its low "
                                "surrogate");
                        goto bad;
                    }
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
                o += put_utf8(o, (unsigned)u);
                p += 4;
                break;
            default:
                fail_at(ps, p, "unknown escape in a string");
                goto bad;
            }
            p += 2;
        } else if (c < 0x20) {
            fail_at(ps, p, "a control character (0x%02x) in a string", c);
            goto bad;
        } else {
            size_t n = utf8_len(ps, (const unsigned char *)p);

            if (n == 0 || p + n > q) {
                fail_at(ps, p, "invalid UTF-8 in a string");
                goto bad;
            }
            memcpy(o, p, n);
            o += n;
            p += n;
        }
    }
    *o = '\0';
    ps->p = q + 1;
    return out;
bad:
    free(out);
    return NULL;
}

static void free_value(ptl_json *v)
{
    if (v->items) {
        for (size_t i = 0; i < v->n; i++) {
            free_value(&v->items[i]);
        }
    }
    if (v->keys) {
        for (size_t i = 0; i < v->n; i++) {
            free(v->keys[i]);
        }
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    memset(v, 0, sizeof(*v));
}

static bool parse_value(parser *ps, ptl_json *v, unsigned depth);

/* Room for one more member; false when out of memory. */
static bool grow(parser *ps, ptl_json *v, size_t *cap, bool keys)
{
    size_t ncap;
    ptl_json *items;

    if (v->n < *cap) {
        return true;
    }
    ncap = *cap ? *cap * 2 : 4;
    items = realloc(v->items, ncap * sizeof(*items));
    if (items) {
        v->items = items;
        if (keys) {
            char **k = realloc(v->keys, ncap * sizeof(*k));

            if (k) {
                v->keys = k;
                *cap = ncap;
                return true;
            }
        } else {
            *cap = ncap;
            return true;
        }
    }
    ptl_set_error(ps->err, PTL_E_INTERNAL, "out of memory");
    ps->failed = true;
    return false;
}

/*
 * The keys of one object, for the duplicate check: a search through all
 * earlier keys is quadratic in the members, minutes for an object of a few
 * MiB. Small objects are searched; from KEYSET_MIN members on, a hash
 * table of indexes into the keys.
 */
#define KEYSET_MIN 16

typedef struct keyset {
    size_t *slot;               /* index + 1 into the keys, 0 = free */
    size_t size;                /* a power of 2, 0 while searched */
} keyset;

static size_t key_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;      /* FNV-1a */

    while (*s) {
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    }
    return (size_t)h;
}

static void keyset_put(keyset *ks, char *const *keys, size_t i)
{
    size_t at = key_hash(keys[i]) & (ks->size - 1);

    while (ks->slot[at]) {
        at = (at + 1) & (ks->size - 1);
    }
    ks->slot[at] = i + 1;
}

/* Room for keys[0..n] at most half full; false when out of memory. */
static bool keyset_grow(keyset *ks, char *const *keys, size_t n)
{
    size_t size = ks->size ? ks->size : 4 * KEYSET_MIN;

    while (size < 2 * (n + 1)) {
        size *= 2;
    }
    if (size == ks->size) {
        return true;
    }
    free(ks->slot);
    ks->slot = calloc(size, sizeof(*ks->slot));
    ks->size = ks->slot ? size : 0;
    if (!ks->slot) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        keyset_put(ks, keys, i);
    }
    return true;
}

/* The index of key among keys[0..n), or n when it is not there. */
static size_t keyset_find(const keyset *ks, char *const *keys, size_t n,
                          const char *key)
{
    size_t at;

    if (!ks->size) {
        for (size_t i = 0; i < n; i++) {
            if (!strcmp(keys[i], key)) {
                return i;
            }
        }
        return n;
    }
    for (at = key_hash(key) & (ks->size - 1); ks->slot[at];
         at = (at + 1) & (ks->size - 1)) {
        if (!strcmp(keys[ks->slot[at] - 1], key)) {
            return ks->slot[at] - 1;
        }
    }
    return n;
}

static bool parse_members(parser *ps, ptl_json *v, unsigned depth,
                          keyset *ks)
{
    bool object = v->type == PTL_JSON_OBJECT;
    char close = object ? '}' : ']';
    size_t cap = 0;
    char buf[16];

    for (;;) {
        char *key = NULL;

        if (!grow(ps, v, &cap, object)) {
            return false;
        }
        if (object) {
            const char *at = ps->p;
            size_t dup;

            if (ps->p >= ps->end || *ps->p != '"') {
                return fail_at(ps, ps->p, "expected a key (a string), found "
                               "%s", found(ps, ps->p, buf, sizeof(buf)));
            }
            key = parse_string(ps);
            if (!key) {
                return false;
            }
            dup = keyset_find(ks, v->keys, v->n, key);
            if (dup < v->n) {
                free(key);
                return fail_at(ps, at, "duplicate key \"%.64s\"",
                               v->keys[dup]);
            }
            if (v->n + 1 >= KEYSET_MIN && !keyset_grow(ks, v->keys, v->n)) {
                free(key);
                ptl_set_error(ps->err, PTL_E_INTERNAL, "out of memory");
                ps->failed = true;
                return false;
            }
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                return fail_at(ps, ps->p, "expected ':' after a key, found "
                               "%s", found(ps, ps->p, buf, sizeof(buf)));
            }
            ps->p++;
            skip_ws(ps);
        }
        memset(&v->items[v->n], 0, sizeof(v->items[v->n]));
        if (object) {
            v->keys[v->n] = key;
            if (ks->size) {
                keyset_put(ks, v->keys, v->n);
            }
        }
        v->n++;
        if (!parse_value(ps, &v->items[v->n - 1], depth + 1)) {
            return false;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return true;
        }
        return fail_at(ps, ps->p, "expected ',' or '%c', found %s", close,
                       found(ps, ps->p, buf, sizeof(buf)));
    }
}

static bool parse_container(parser *ps, ptl_json *v, unsigned depth)
{
    char close = *ps->p == '{' ? '}' : ']';
    keyset ks = { 0 };
    bool ok;

    if (depth >= PTL_JSON_MAX_DEPTH) {
        return fail_at(ps, ps->p, "nested deeper than %d levels",
                       PTL_JSON_MAX_DEPTH);
    }
    v->type = close == '}' ? PTL_JSON_OBJECT : PTL_JSON_ARRAY;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return true;
    }
    ok = parse_members(ps, v, depth, &ks);
    free(ks.slot);
    return ok;
}

/* A value at ps->p (whitespace skipped). */
static bool parse_value(parser *ps, ptl_json *v, unsigned depth)
{
    char buf[16];

    v->line = ps->line;
    v->column = column(ps, ps->p);
    if (++ps->values > PTL_JSON_MAX_VALUES) {
        return fail_at(ps, ps->p, "more than %d values", PTL_JSON_MAX_VALUES);
    }
    if (ps->p >= ps->end) {
        return fail_at(ps, ps->p, "expected a value, found the end of the "
                       "input");
    }
    switch (*ps->p) {
    case '{':
    case '[':
        return parse_container(ps, v, depth);
    case '"':
        v->type = PTL_JSON_STRING;
        v->string = parse_string(ps);
        return v->string != NULL;
    case 't':
        v->type = PTL_JSON_TRUE;
        return literal(ps, "true");
    case 'f':
        v->type = PTL_JSON_FALSE;
        return literal(ps, "false");
    case 'n':
        v->type = PTL_JSON_NULL;
        return literal(ps, "null");
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) {
            return parse_number(ps, v);
        }
        return fail_at(ps, ps->p, "expected a value, found %s",
                       found(ps, ps->p, buf, sizeof(buf)));
    }
}

ptl_err ptl_json_parse(const char *text, size_t len, unsigned line,
                       unsigned col, size_t *end, ptl_json **out,
                       ptl_error *err)
{
    parser ps = {
        .p = text, .end = text + len, .line = line ? line : 1,
        .line_start = text, .col_base = col ? col - 1 : 0, .err = err,
    };
    ptl_json *v = calloc(1, sizeof(*v));

    *out = NULL;
    if (!v) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    skip_ws(&ps);
    if (!parse_value(&ps, v, 0)) {
        ptl_json_free(v);
        return err ? err->code : PTL_E_USAGE;
    }
    if (end) {
        *end = (size_t)(ps.p - text);
    } else {
        char buf[16];

        skip_ws(&ps);
        if (ps.p < ps.end) {
            fail_at(&ps, ps.p, "unexpected %s after the value",
                    found(&ps, ps.p, buf, sizeof(buf)));
            ptl_json_free(v);
            return PTL_E_USAGE;
        }
    }
    *out = v;
    return PTL_OK;
}

void ptl_json_free(ptl_json *v)
{
    if (v) {
        free_value(v);
        free(v);
    }
}

const ptl_json *ptl_json_get(const ptl_json *obj, const char *key)
{
    if (!obj || obj->type != PTL_JSON_OBJECT) {
        return NULL;
    }
    for (size_t i = 0; i < obj->n; i++) {
        if (!strcmp(obj->keys[i], key)) {
            return &obj->items[i];
        }
    }
    return NULL;
}
