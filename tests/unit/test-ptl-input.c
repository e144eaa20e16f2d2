/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Saved readings read back: the strict JSON parser (what it accepts, what
 * it refuses and where it says the fault is, hostile input that must not
 * crash or grow without bound), the schema of a document, and a stream of
 * documents split as a watch writes them.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-telemetry.h"

static ptl_json *parse_ok(const char *text)
{
    ptl_json *v = NULL;
    ptl_error err = { 0 };

    if (ptl_json_parse(text, strlen(text), 1, 1, NULL, &v, &err) != PTL_OK) {
        g_error("'%s' refused: %s", text, err.msg);
    }
    return v;
}

/* Refused with PTL_E_USAGE and a message that contains want. */
static void parse_bad(const char *text, size_t len, const char *want)
{
    ptl_json *v = (ptl_json *)1;
    ptl_error err = { 0 };

    if (ptl_json_parse(text, len, 1, 1, NULL, &v, &err) != PTL_E_USAGE) {
        g_error("'%.*s' accepted", (int)MIN(len, 80), text);
    }
    g_assert_null(v);
    g_assert_null(strchr(err.msg, '\n'));
    if (!strstr(err.msg, want)) {
        g_error("'%.*s': message '%s' lacks '%s'", (int)MIN(len, 80), text,
                err.msg, want);
    }
}

static void test_values(void)
{
    ptl_json *v = parse_ok(" {\"a\": [1, -2, 3.5, 1e3, true, false, null],"
                           "\n \"b\": {\"c\": \"x\\u00e9\\ud83d\\ude00\\n\"},"
                           " \"d\": 18446744073709551615,"
                           " \"e\": 18446744073709551616, \"f\": []} ");
    const ptl_json *a = ptl_json_get(v, "a"), *b, *d, *e;

    g_assert_cmpint(v->type, ==, PTL_JSON_OBJECT);
    g_assert_cmpuint(v->n, ==, 5);
    g_assert_cmpstr(v->keys[4], ==, "f");
    g_assert_cmpint(a->type, ==, PTL_JSON_ARRAY);
    g_assert_cmpuint(a->n, ==, 7);
    g_assert_true(a->items[0].is_uint && a->items[0].uint == 1);
    g_assert_false(a->items[1].is_uint);
    g_assert_cmpfloat(a->items[1].number, ==, -2);
    g_assert_false(a->items[2].is_uint);
    g_assert_cmpfloat(a->items[2].number, ==, 3.5);
    g_assert_false(a->items[3].is_uint);
    g_assert_cmpint(a->items[4].type, ==, PTL_JSON_TRUE);
    g_assert_cmpint(a->items[5].type, ==, PTL_JSON_FALSE);
    g_assert_cmpint(a->items[6].type, ==, PTL_JSON_NULL);
    b = ptl_json_get(v, "b");
    g_assert_cmpstr(ptl_json_get(b, "c")->string, ==,
                    "x\xc3\xa9\xf0\x9f\x98\x80\n");
    g_assert_cmpuint(b->line, ==, 2);
    g_assert_cmpuint(b->column, ==, 7);
    d = ptl_json_get(v, "d");
    g_assert_true(d->is_uint && d->uint == UINT64_MAX);
    e = ptl_json_get(v, "e");
    g_assert_false(e->is_uint);
    g_assert_cmpfloat(e->number, ==, 18446744073709551616.0);
    g_assert_cmpuint(ptl_json_get(v, "f")->n, ==, 0);
    g_assert_null(ptl_json_get(v, "zz"));
    ptl_json_free(v);
}

static void test_refused(void)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        { "", "line 1, column 1: expected a value, found the end" },
        { "   ", "expected a value" },
        { "{", "line 1, column 2: expected a key" },
        { "{\"a\" 1}", "line 1, column 6: expected ':'" },
        { "{\"a\": 1,}", "line 1, column 9: expected a key" },
        { "[1, 2,]", "line 1, column 7: expected a value, found ']'" },
        { "[1 2]", "expected ',' or ']', found '2'" },
        { "{\"a\": 1, \"a\": 2}", "line 1, column 10: duplicate key \"a\"" },
        { "01", "leading zeros" },
        { "-", "a number needs a digit" },
        { "1.", "a fraction needs a digit" },
        { "1e", "an exponent needs a digit" },
        { "+1", "expected a value, found '+'" },
        { ".5", "expected a value, found '.'" },
        { "NaN", "expected a value, found 'N'" },
        { "Infinity", "found 'I'" },
        { "tru", "unexpected 't'" },
        { "nul", "unexpected 'n'" },
        { "\"abc", "a string is not closed" },
        { "\"a\tb\"", "a control character (0x09)" },
        { "\"\\x\"", "unknown escape" },
        { "\"\\u12\"", "\\u needs 4 hex digits" },
        { "\"\\u0000\"", "\\u0000 is not accepted" },
        { "\"\\udc00\"", "a lone low surrogate" },
        { "\"\\ud800\"", "a high surrogate without" },
        { "\"\\ud800\\u0041\"", "a high surrogate without" },
        { "\"\xc3\"", "invalid UTF-8" },
        { "\"\xc0\xaf\"", "invalid UTF-8" },
        { "\"\xed\xa0\x80\"", "invalid UTF-8" },
        { "\"\xf4\x90\x80\x80\"", "invalid UTF-8" },
        { "\"\xff\"", "invalid UTF-8" },
        { "{} x", "line 1, column 4: unexpected 'x' after the value" },
        { "{}\n\n  {}", "line 3, column 3: unexpected '{' after the value" },
        { "// c\n{}", "found '/'" },
        { "{'a': 1}", "expected a key (a string), found '''" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        parse_bad(bad[i].text, strlen(bad[i].text), bad[i].want);
    }
    /* a NUL byte is a byte like any other, not the end of the text */
    parse_bad("[1,\0 2]", 7, "found byte 0x00");
    parse_bad("\"a\0b\"", 5, "a control character (0x00)");
}

/* Nesting: up to the limit, one more is refused, far more too. */
static void test_depth(void)
{
    GString *s = g_string_new(NULL);
    ptl_json *v;

    for (int i = 0; i < PTL_JSON_MAX_DEPTH; i++) {
        g_string_append_c(s, '[');
    }
    for (int i = 0; i < PTL_JSON_MAX_DEPTH; i++) {
        g_string_append_c(s, ']');
    }
    v = parse_ok(s->str);
    ptl_json_free(v);
    g_string_insert_c(s, 0, '[');
    g_string_append_c(s, ']');
    parse_bad(s->str, s->len, "nested deeper than 64 levels");
    g_string_truncate(s, 0);
    for (int i = 0; i < 1000000; i++) {
        g_string_append(s, i & 1 ? "{\"a\":" : "[");
    }
    parse_bad(s->str, s->len, "nested deeper than 64 levels");
    g_string_free(s, true);
}

/* More values than the limit: refused, whatever their size. */
static void test_many_values(void)
{
    GString *s = g_string_new("[");

    for (int i = 0; i < PTL_JSON_MAX_VALUES; i++) {
        g_string_append(s, "0,");
    }
    g_string_append(s, "0]");
    parse_bad(s->str, s->len, "more than 1000000 values");
    g_string_free(s, true);
}

/* Every prefix of a valid text and every single-byte change of it: no
 * crash, no leak (run under valgrind or a sanitizer), a message. */
static void test_mutations(void)
{
    const char *text = "{\"seconds\": 1.5e-3, \"data\": {\"a\": [0, 1, "
                       "\"x\\u00e9\\ud83d\\ude00\"], \"b\": {}, \"c\": "
                       "[true, false, null, -0.0]}}";
    size_t len = strlen(text);
    char *buf = g_malloc(len + 1);
    static const char repl[] = "{}[]\",:\\0-.e \n\x80\xff";

    for (size_t n = 0; n < len; n++) {
        ptl_json *v;
        ptl_error err;

        g_assert_cmpint(ptl_json_parse(text, n, 1, 1, NULL, &v, &err), ==,
                        PTL_E_USAGE);
        g_assert_null(v);
    }
    for (size_t i = 0; i < len; i++) {
        for (size_t k = 0; k < sizeof(repl) - 1; k++) {
            ptl_json *v = NULL;
            ptl_error err;

            memcpy(buf, text, len);
            buf[i] = repl[k];
            if (ptl_json_parse(buf, len, 1, 1, NULL, &v, &err) == PTL_OK) {
                ptl_json_free(v);
            } else {
                g_assert_null(v);
                g_assert_cmpuint(strlen(err.msg), >, 0);
            }
        }
    }
    g_free(buf);
}

/* ------------------------------------------------------------- schema */

static char *report_file(const char *name)
{
    const char *dir = g_getenv("PTL_REPORT_DATA");
    char *path = g_strdup_printf("%s/%s", dir ? dir : "tests/unit/data/report",
                                 name);
    char *s = NULL;

    g_assert_true(g_file_get_contents(path, &s, NULL, NULL));
    g_free(path);
    return s;
}

/* text with the first occurrence of from replaced by to */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);

    g_assert_nonnull(at);
    return g_strdup_printf("%.*s%s%s", (int)(at - text), text, to,
                           at + strlen(from));
}

static void schema_bad(const char *text, const char *want)
{
    ptl_json *doc;
    ptl_data *d = (ptl_data *)1;
    ptl_error err = { 0 };
    double seconds;

    g_assert_cmpint(ptl_json_parse(text, strlen(text), 1, 1, NULL, &doc,
                                   &err), ==, PTL_OK);
    if (ptl_data_from_json(doc, &d, &seconds, &err) != PTL_E_USAGE) {
        g_error("accepted, expected '%s'", want);
    }
    g_assert_null(d);
    if (!strstr(err.msg, want)) {
        g_error("message '%s' lacks '%s'", err.msg, want);
    }
    ptl_json_free(doc);
}

static void test_schema(void)
{
    static const struct {
        const char *from, *to, *want;
    } bad[] = {
        { "\"seconds\": 8.192e-05", "\"seconds\": 0",
          "line 2, column 16: seconds: expected null (totals) or a number "
          "above 0" },
        { "\"seconds\": 8.192e-05", "\"seconds\": -1", "seconds: expected" },
        { "\"seconds\": 8.192e-05", "\"seconds\": \"1\"", "seconds:" },
        { "\"seconds\": 8.192e-05", "\"seconds\": 1e999", "seconds:" },
        { "\"seconds\": 8.192e-05,", "", "document: missing key \"seconds\"" },
        { "\"busy\": false", "\"busy\": 0",
          "data.status.busy: expected true or false, found a number" },
        { "\"lost_deltas\": false", "\"lost_deltas\": false, \"x\": 1",
          "data.status: unknown key \"x\"" },
        { "\"dma_ports\": 1", "\"dma_ports\": 2",
          "data.endpoints[0].buses: expected 6 buses (2 DMA ports), found 4" },
        { "\"pcie_endpoints\": 1", "\"pcie_endpoints\": 2",
          "data.endpoints: expected 2 endpoints (config.pcie_endpoints), "
          "found 1" },
        { "\"pcie_endpoints\": 1", "\"pcie_endpoints\": 256",
          "data.config.pcie_endpoints: expected an integer from 0 to 255" },
        { "\"hist_bands\": 4", "\"hist_bands\": 5",
          "data.endpoints[0].hists[0]: expected 5 items, found 4" },
        { "\"index\": 0", "\"index\": 1",
          "data.endpoints[0].index: expected 0 (the position in the list)" },
        { "\"pcie_cycles\": 32768", "\"pcie_cycles\": -1",
          "data.endpoints[0].pcie_cycles: expected an integer from 0 to "
          "18446744073709551615, found another number" },
        { "\"pcie_cycles\": 32768", "\"pcie_cycles\": 32768.0",
          "found another number" },
        { "\"words\": 16384", "\"words\": null",
          "data.endpoints[0].buses[\"PTC -> PCIe (RQ)\"].words: expected an "
          "integer" },
        { "\"PCIe -> PTC (RC)\"", "\"PCIe -> PTC (RX)\"",
          "data.endpoints[0].buses: expected the bus \"PCIe -> PTC (RC)\" "
          "here, found \"PCIe -> PTC (RX)\"" },
        { "\"brakes\": [", "\"brakes\": [true, ",
          "data.endpoints[0].brakes[0]: expected an integer" },
        { "\"regions\": [", "\"regions\": {}, \"r\": [",
          "unknown key \"r\"" },
        { "\"tags_free\": 20", "\"tags_free\": 65536",
          "tags_free: expected an integer from 0 to 65535" },
        { "\"dma_up\": false", "\"dma_up\": \"no\"",
          "dma_up: expected true or false, found a string" },
        { "\"data\": {", "\"data\": [], \"x\": {",
          "document: unknown key \"x\"" },
        { "\"endpoints\": [", "\"endpoints\": {}, \"e\": [",
          "data: unknown key \"e\"" },
    };
    char *json = report_file("pattern-1x1.json");

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *t = replace(json, bad[i].from, bad[i].to);

        g_test_message("%s -> %s", bad[i].from, bad[i].to);
        schema_bad(t, bad[i].want);
        g_free(t);
    }
    schema_bad("[]", "document: expected an object, found an array");
    g_free(json);
}

/* ------------------------------------------------------------- stream */

/* All documents of text; returns the error (PTL_OK) and their number. */
static ptl_err read_all(const char *text, size_t len, unsigned *n,
                        ptl_error *err)
{
    FILE *f = fmemopen((void *)text, len, "r");
    ptl_input *in = ptl_input_new(f);
    ptl_err e;

    *n = 0;
    for (;;) {
        ptl_data *d;
        double s;

        e = ptl_input_next(in, &d, &s, err);
        if (e != PTL_OK || !d) {
            break;
        }
        ptl_data_free(d);
        ++*n;
    }
    g_assert_cmpuint(ptl_input_count(in), ==, *n);
    ptl_input_free(in);
    fclose(f);
    return e;
}

static void test_stream(void)
{
    char *one = report_file("pattern-1x1.json");
    char *watch = report_file("watch.json");
    char *two = g_strconcat(one, one, NULL);
    char *chomped = g_strchomp(g_strdup(one));
    char *glued = g_strconcat(chomped, "{}", NULL);
    char *cut = g_strndup(watch, strlen(watch) - 3);
    char *trail = g_strconcat(one, "\n  x", NULL);
    char *big = g_malloc(PTL_INPUT_MAX_DOCUMENT + 10);
    unsigned n;
    ptl_error err;

    g_assert_cmpint(read_all(one, strlen(one), &n, &err), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpint(read_all(watch, strlen(watch), &n, &err), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 3);
    g_assert_cmpint(read_all(two, strlen(two), &n, &err), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpint(read_all("", 0, &n, &err), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 0);
    g_assert_cmpint(read_all(" \n\t ", 4, &n, &err), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 0);

    /* the second document is an empty object, directly after the first */
    g_assert_cmpint(read_all(glued, strlen(glued), &n, &err), ==,
                    PTL_E_USAGE);
    g_assert_cmpuint(n, ==, 1);
    g_assert_true(g_str_has_prefix(err.msg, "document 2: line 127, column "
                                   "2: document: missing key"));
    /* the third document of the watch ends early */
    g_assert_cmpint(read_all(cut, strlen(cut), &n, &err), ==, PTL_E_USAGE);
    g_assert_cmpuint(n, ==, 2);
    g_assert_true(g_str_has_prefix(err.msg, "document 3: line "));
    g_assert_nonnull(strstr(err.msg, "found the end of the input"));
    /* something after the last document */
    g_assert_cmpint(read_all(trail, strlen(trail), &n, &err), ==,
                    PTL_E_USAGE);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpstr(err.msg, ==, "document 2: line 129, column 3: expected "
                    "'{' (a document is a JSON object), found 'x'");
    g_assert_cmpint(read_all("\xef\xbb\xbf{}", 5, &n, &err), ==,
                    PTL_E_USAGE);
    g_assert_nonnull(strstr(err.msg, "found byte 0xef"));
    /* a document that never ends: refused at the size limit */
    memset(big, ' ', PTL_INPUT_MAX_DOCUMENT + 10);
    big[0] = '[';
    big[0] = '{';
    g_assert_cmpint(read_all(big, PTL_INPUT_MAX_DOCUMENT + 10, &n, &err),
                    ==, PTL_E_USAGE);
    g_assert_nonnull(strstr(err.msg, "longer than 4194304 bytes"));
    /* brackets inside strings do not end a document early */
    g_assert_cmpint(read_all("{\"}\": 1}", 8, &n, &err), ==, PTL_E_USAGE);
    g_assert_nonnull(strstr(err.msg, "unknown key \"}\""));

    g_free(big);
    g_free(trail);
    g_free(cut);
    g_free(glued);
    g_free(chomped);
    g_free(two);
    g_free(one);
    g_free(watch);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptl/json/values", test_values);
    g_test_add_func("/ptl/json/refused", test_refused);
    g_test_add_func("/ptl/json/depth", test_depth);
    g_test_add_func("/ptl/json/many-values", test_many_values);
    g_test_add_func("/ptl/json/mutations", test_mutations);
    g_test_add_func("/ptl/input/schema", test_schema);
    g_test_add_func("/ptl/input/stream", test_stream);
    return g_test_run();
}
