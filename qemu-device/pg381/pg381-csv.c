/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PG381's CSV traffic profile (pg381-csv.h). Hex fields take PG381's
 * 0x prefix (with '_' between digits), counts and clocks decimal. What
 * the card does not model (random addresses, sizes in KB/MB/GB, INF,
 * bandwidth in MBps, other data patterns) is refused by name, as are
 * values out of their field's range.
 */
#include <string.h>
#include <glib.h>

#include "pg381-csv.h"

const char *const pg381_csv_columns[PG381_CSV_COLUMNS + 1] = {
    "",
    "TG_NUM", "cmd", "txn_count/loop_count/wait_option|txn_count",
    "start_delay/loop_operation|start_delay",
    "loop_addr_incr_by|inter_beat_delay", "wdata_pattern",
    "wdata_pat_value", "data_integrity", "dest_id", "base_addr",
    "high_addr", "addr_incr_by", "axi_addr_offset", "axi_len", "axi_size",
    "axi_id", "axi_burst", "axi_lock", "axi_cache", "axi_prot", "axi_qos",
    "axi_region", "axi_user", "exp_resp",
};

enum {
    COL_TG = 1, COL_CMD, COL_COUNT, COL_DELAY, COL_LOOP_INCR, COL_PATTERN,
    COL_PAT_VALUE, COL_DI, COL_DEST, COL_BASE, COL_HIGH, COL_INCR,
    COL_OFFSET, COL_LEN, COL_SIZE, COL_ID, COL_BURST, COL_LOCK, COL_CACHE,
    COL_PROT, COL_QOS, COL_REGION, COL_USER, COL_RESP,
};

/* One line being read */
typedef struct Line {
    unsigned no;
    char *f[PG381_CSV_COLUMNS + 1];     /* trimmed fields, 1-based */
    char *err;
} Line;

/* The first error of a line wins */
static bool fail(Line *l, unsigned col, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

static bool fail(Line *l, unsigned col, const char *fmt, ...)
{
    g_autofree char *msg = NULL;
    const char *name = col <= PG381_CSV_COLUMNS ? pg381_csv_columns[col] : "";
    g_autofree char *first = g_strndup(name, strcspn(name, "|/"));
    va_list ap;

    if (l->err) {
        return false;
    }
    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (col > PG381_CSV_COLUMNS) {
        l->err = g_strdup_printf("line %u, column %u: %s", l->no, col, msg);
    } else if (col) {
        l->err = g_strdup_printf("line %u, column %u (%s): %s", l->no, col,
                                 first, msg);
    } else {
        l->err = g_strdup_printf("line %u: %s", l->no, msg);
    }
    return false;
}

static bool is(const char *a, const char *b)
{
    return !g_ascii_strcasecmp(a, b);
}

/* A hex field: 0x, digits with '_' between them, at most `max` */
static bool hex(Line *l, unsigned col, uint64_t max, uint64_t *out)
{
    const char *p = l->f[col];
    uint64_t v = 0;
    unsigned digits = 0;

    if (!*p) {
        return fail(l, col, "empty; a hex value is needed");
    }
    if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X')) {
        return fail(l, col, "'%s' has no 0x prefix (PG381's hex fields "
                    "take one)", p);
    }
    for (p += 2; *p; p++) {
        int d = g_ascii_xdigit_value(*p);

        if (*p == '_' && digits) {
            continue;
        }
        if (d < 0) {
            return fail(l, col, "'%s' is not a hex number", l->f[col]);
        }
        if (v >> 60) {
            return fail(l, col, "'%s' is wider than 64 bits", l->f[col]);
        }
        v = v << 4 | d;
        digits++;
    }
    if (!digits) {
        return fail(l, col, "'%s' has no digits", l->f[col]);
    }
    if (v > max) {
        return fail(l, col, "0x%" G_GINT64_MODIFIER "x is above 0x%"
                    G_GINT64_MODIFIER "x", v, max);
    }
    *out = v;
    return true;
}

/* A hex field that may be empty (def) */
static bool hex_or(Line *l, unsigned col, uint64_t max, uint64_t def,
                   uint64_t *out)
{
    if (!*l->f[col]) {
        *out = def;
        return true;
    }
    return hex(l, col, max, out);
}

/* A decimal field in [min, max]; empty is def */
static bool dec(Line *l, unsigned col, uint64_t min, uint64_t max,
                uint64_t def, uint64_t *out)
{
    const char *p = l->f[col];
    uint64_t v = 0;
    bool over = false;

    if (!*p) {
        *out = def;
        return true;
    }

    for (; *p; p++) {
        if (!g_ascii_isdigit(*p)) {
            return fail(l, col, "'%s' is not a decimal number", l->f[col]);
        }
        over |= v > (UINT64_MAX - 9) / 10;
        v = over ? v : v * 10 + (*p - '0');
    }
    if (over || v < min || v > max) {
        return fail(l, col, "'%s' is outside %" G_GUINT64_FORMAT " to %"
                    G_GUINT64_FORMAT, l->f[col], min, max);
    }
    *out = v;
    return true;
}

/* A named value or a hex one */
static bool named(Line *l, unsigned col, const char *const *names,
                  uint64_t max, uint64_t def, uint64_t *out)
{
    for (unsigned i = 0; names[i]; i++) {
        if (is(l->f[col], names[i])) {
            *out = i;
            return true;
        }
    }
    return hex_or(l, col, max, def, out);
}

static bool count_field(Line *l, Pg381Instr *in)
{
    const char *p = l->f[COL_COUNT];
    uint64_t v;

    if (is(p, "INF") || g_str_has_suffix(p, "KB") ||
        g_str_has_suffix(p, "MB") || g_str_has_suffix(p, "GB")) {
        return fail(l, COL_COUNT, "'%s': the card takes a count of requests, "
                    "1 to %u", p, PG381_MAX_REQUESTS);
    }
    if (!*p) {
        return fail(l, COL_COUNT, "empty; a count of requests is needed");
    }
    if (!dec(l, COL_COUNT, 1, PG381_MAX_REQUESTS, 0, &v)) {
        return false;
    }
    in->count = v;
    return true;
}

/* The fields of a WRITE or READ */
static bool request(Line *l, Pg381Instr *in)
{
    static const char *const bursts[] = { "FIXED", "INCR", "WRAP", NULL };
    static const char *const locks[] = { "NORMAL", "EXCLUSIVE", NULL };
    static const char *const none[] = { NULL };
    const char *pat = l->f[COL_PATTERN], *di = l->f[COL_DI];
    uint64_t v;

    if (!count_field(l, in)) {
        return false;
    }
    if (g_str_has_suffix(l->f[COL_DELAY], "MBps")) {
        return fail(l, COL_DELAY, "'%s': the card takes start_delay in "
                    "clocks", l->f[COL_DELAY]);
    }
    if (!dec(l, COL_DELAY, 0, UINT32_MAX, 0, &v)) {
        return false;
    }
    in->start_delay = v;
    if (*l->f[COL_LOOP_INCR] && strcmp(l->f[COL_LOOP_INCR], "0")) {
        return fail(l, COL_LOOP_INCR, "'%s': only START_LOOP takes this "
                    "column (and inter_beat_delay is not modelled)",
                    l->f[COL_LOOP_INCR]);
    }
    if (!*pat || is(pat, "constant")) {
        in->pattern = PG381_PAT_CONSTANT;
    } else if (is(pat, "same_as_addr")) {
        in->pattern = PG381_PAT_ADDR;
    } else {
        return fail(l, COL_PATTERN, "'%s': the card writes constant or "
                    "same_as_addr", pat);
    }
    if (!hex_or(l, COL_PAT_VALUE, UINT32_MAX, 0, &v)) {
        return false;
    }
    in->pattern_value = v;
    if (*di && !is(di, "enabled") && !is(di, "disabled")) {
        return fail(l, COL_DI, "'%s': enabled or disabled", di);
    }
    in->data_integrity = is(di, "enabled");
    if (!hex_or(l, COL_DEST, 0xFFF, 0, &v) ||
        !hex(l, COL_BASE, UINT64_MAX, &in->base) ||
        !hex(l, COL_HIGH, UINT64_MAX, &in->high)) {
        return false;
    }
    in->addr_auto = is(l->f[COL_INCR], "auto_incr");
    if (!in->addr_auto && !hex(l, COL_INCR, UINT64_MAX, &in->incr)) {
        return false;
    }
    if (g_str_has_prefix(l->f[COL_OFFSET], "random")) {
        return fail(l, COL_OFFSET, "'%s': random addresses are not modelled",
                    l->f[COL_OFFSET]);
    }
    if (!hex_or(l, COL_OFFSET, UINT64_MAX, 0, &in->offset)) {
        return false;
    }
    if (!hex_or(l, COL_LEN, 0xFF, 0, &v)) {
        return false;
    }
    in->len = v;
    if (!hex_or(l, COL_SIZE, 7, 0, &v)) {
        return false;
    }
    in->size = v;
    if (pg381_instr_bytes(in) > PG381_MAX_BYTES) {
        return fail(l, COL_LEN, "%u beats of %u bytes: more than %u bytes "
                    "a request", in->len + 1, 1u << in->size,
                    PG381_MAX_BYTES);
    }
    in->id_incr = is(l->f[COL_ID], "auto_incr");
    if (!in->id_incr) {
        if (!hex_or(l, COL_ID, 0xFFFF, 0, &v)) {
            return false;
        }
        in->id = v;
    }
    if (!named(l, COL_BURST, bursts, 2, PG381_BURST_INCR, &v)) {
        return false;
    }
    in->burst = v;
    if (!named(l, COL_LOCK, locks, 1, 0, &v)) {
        return false;
    }
    in->lock = v;
    if (!named(l, COL_CACHE, none, 0xF, 0, &v)) {
        return false;
    }
    in->cache = v;
    if (!named(l, COL_PROT, none, 7, 0, &v)) {
        return false;
    }
    in->prot = v;
    if (!named(l, COL_QOS, none, 0xF, 0, &v)) {
        return false;
    }
    in->qos = v;
    if (!named(l, COL_REGION, none, 0xF, 0, &v)) {
        return false;
    }
    in->region = v;
    if (!named(l, COL_USER, none, 0xFF, 0, &v)) {
        return false;
    }
    in->user = v;
    return true;                        /* exp_resp: not checked */
}

static bool wait_field(Line *l, Pg381Instr *in)
{
    static const char *const opts[] = {
        "", "all_wr_resp", "all_rd_resp", "all_wr_rd_resp",
    };
    const char *p = l->f[COL_COUNT];
    uint64_t v;

    for (unsigned i = 1; i < 4; i++) {
        if (is(p, opts[i])) {
            in->wait = i;
            return true;
        }
    }
    if (!*p || !g_ascii_isdigit(*p)) {
        return fail(l, COL_COUNT, "'%s': all_wr_resp, all_rd_resp, "
                    "all_wr_rd_resp or clocks", p);
    }
    if (!dec(l, COL_COUNT, 0, UINT32_MAX, 0, &v)) {
        return false;
    }
    in->wait = PG381_WAIT_CLOCKS;
    in->count = v;
    return true;
}

static bool header_ok(Line *l)
{
    for (unsigned c = 1; c <= PG381_CSV_COLUMNS; c++) {
        g_auto(GStrv) alt = g_strsplit(pg381_csv_columns[c], "|", -1);
        bool ok = false;

        for (unsigned i = 0; alt[i]; i++) {
            ok |= is(l->f[c], alt[i]);
        }
        if (!ok) {
            return fail(l, c, "the header names '%s' here, PG381's CSV '%s'",
                        l->f[c], alt[0]);
        }
    }
    return true;
}

/* Splits a line into its trimmed fields; false where there are too many */
static bool split(Line *l, char *text)
{
    unsigned c = 1;
    char *p = text;

    for (unsigned i = 0; i <= PG381_CSV_COLUMNS; i++) {
        l->f[i] = (char *)"";
    }
    for (;;) {
        char *comma = strchr(p, ',');

        if (comma) {
            *comma = 0;
        }
        if (c <= PG381_CSV_COLUMNS) {
            l->f[c] = g_strstrip(p);
        } else if (*g_strstrip(p)) {
            return fail(l, c, "'%s' past the %u columns of PG381's CSV",
                        p, PG381_CSV_COLUMNS);
        }
        if (!comma) {
            return true;
        }
        p = comma + 1;
        c++;
    }
}

/* A line with nothing but separators and blanks */
static bool blank(const char *s)
{
    return !s[strspn(s, ", \t")];
}

char *pg381_csv_parse(const char *text, size_t len, unsigned tg,
                      Pg381Instr *prog, unsigned *n)
{
    g_autofree char *copy = g_strndup(text, len);
    g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
    bool header = false, loop_pending = false;
    unsigned count = 0, loop_line = 0;
    bool in_loop = false;
    unsigned last_line = 0;
    Pg381Instr pend = { 0 };
    Line l = { 0 };

    for (unsigned i = 0; lines[i] && !l.err; i++) {
        char *s = lines[i];
        size_t k = strlen(s);
        uint64_t v;

        l.no = i + 1;
        if (k && s[k - 1] == '\r') {
            s[k - 1] = 0;
        }
        if (s[strspn(s, " \t")] == '#' || blank(s)) {
            continue;
        }
        last_line = l.no;
        if (!split(&l, s)) {
            break;
        }
        if (!header) {
            header = header_ok(&l);
            continue;
        }
        if (*l.f[COL_TG]) {
            if (!dec(&l, COL_TG, 0, 31, 0, &v)) {
                break;
            }
            if (v != tg) {
                continue;               /* another generator's line */
            }
        }
        if (is(l.f[COL_CMD], "PHASE_DONE")) {
            continue;                   /* one generator: nothing to sync */
        }
        if (is(l.f[COL_CMD], "START_LOOP")) {
            if (in_loop) {
                fail(&l, COL_CMD, "a loop inside the loop of line %u (PG381 "
                     "has no nested loops)", loop_line);
                break;
            }
            memset(&pend, 0, sizeof(pend));
            if (!*l.f[COL_COUNT]) {
                fail(&l, COL_COUNT, "empty; a loop_count is needed");
                break;
            }
            if (!dec(&l, COL_COUNT, 1, 0xFFFF, 0, &v)) {
                break;
            }
            pend.loop_count = v;
            if (*l.f[COL_DELAY] && !is(l.f[COL_DELAY], "incr_original_addr")) {
                fail(&l, COL_DELAY, "'%s': the loop_operation is "
                     "incr_original_addr", l.f[COL_DELAY]);
                break;
            }
            if (!hex_or(&l, COL_LOOP_INCR, 0xFFFF, 0, &v)) {
                break;
            }
            pend.loop_incr = v;
            in_loop = loop_pending = true;
            loop_line = l.no;
            continue;
        }
        if (is(l.f[COL_CMD], "END_LOOP")) {
            if (!in_loop) {
                fail(&l, COL_CMD, "END_LOOP without START_LOOP");
            } else if (loop_pending) {
                fail(&l, COL_CMD, "the loop of line %u holds no instruction",
                     loop_line);
            } else {
                prog[count - 1].loop_end = true;
                in_loop = false;
            }
            continue;
        }
        if (count == PG381_INSTRS) {
            fail(&l, 0, "more than %u instructions (PG381's instruction RAM)",
                 PG381_INSTRS);
            break;
        }
        memset(&prog[count], 0, sizeof(prog[count]));
        if (is(l.f[COL_CMD], "WRITE") || is(l.f[COL_CMD], "READ")) {
            prog[count].cmd = is(l.f[COL_CMD], "WRITE") ? PG381_CMD_WRITE
                                                        : PG381_CMD_READ;
            if (!request(&l, &prog[count])) {
                break;
            }
        } else if (is(l.f[COL_CMD], "WAIT")) {
            prog[count].cmd = PG381_CMD_WAIT;
            if (!wait_field(&l, &prog[count])) {
                break;
            }
        } else {
            fail(&l, COL_CMD, "'%s': WRITE, READ, WAIT, START_LOOP, "
                 "END_LOOP or PHASE_DONE", l.f[COL_CMD]);
            break;
        }
        if (loop_pending) {
            prog[count].loop_start = true;
            prog[count].loop_count = pend.loop_count;
            prog[count].loop_incr = pend.loop_incr;
            loop_pending = false;
        }
        count++;
    }
    if (!l.err && !header) {
        l.no = 1;
        fail(&l, 0, "no header line (PG381's CSV starts with the column "
             "names)");
    }
    if (!l.err && in_loop) {
        l.no = loop_line;
        fail(&l, 0, "START_LOOP without END_LOOP");
    }
    if (!l.err && !count) {
        l.no = last_line;
        fail(&l, 0, "no instruction for TG %u", tg);
    }
    if (l.err) {
        return l.err;
    }
    prog[count - 1].last = true;
    *n = count;
    return NULL;
}
