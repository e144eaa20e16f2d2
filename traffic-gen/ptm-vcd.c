/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The VCD reader of the replay generator: the header's scopes and signals
 * matched to the ports of PCIE_TELEMETRY_MI (GHDL's and other simulators'
 * spellings, arrays per endpoint, bit ranges), then the value changes,
 * sampled at each rising edge of PCIE_CLK and DMA_CLK into the trace store.
 */
#include <glib.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptm-vcd.h"

typedef struct Sel {
    bool range;
    int64_t a, b;               /* index a, or range a:b (left:right) */
} Sel;

/* A $var whose name is a port. */
typedef struct Cand {
    unsigned scope, port, size, line, nsel;
    Sel sel[2];
    char *id;
    char *ref;                  /* as the file writes it */
} Cand;

/* A port GHDL left out ("$comment name is not handled $end"). */
typedef struct Unhandled {
    unsigned scope, port, line;
} Unhandled;

typedef struct Scope {
    int parent;
    unsigned depth;
    char *path;                 /* lower case, dot separated */
} Scope;

/* One identifier code the replay needs. */
typedef struct Sig {
    unsigned size, words;
    uint64_t *cur_v, *cur_u;    /* value and x/z bits; bit 0 = rightmost */
    uint64_t *nxt_v, *nxt_u;    /* after this timestamp's changes */
    bool touched;
    uint32_t probes;            /* bit 2e+d: samples it feeds */
} Sig;

/* Bit sig_bit of signal sig is bit elem_bit of a port element. */
typedef struct BitRef {
    uint32_t sig, sig_bit, elem_bit;
} BitRef;

typedef struct Elem {
    GArray *bits;               /* BitRef; NULL if the file lacks it */
    unsigned width, line;
    uint64_t *v, *u, *seen;
} Elem;

typedef struct Vcd {
    Rd rd;
    PtmReplayTrace *t;
    const Shape *sh;
    GArray *scopes;             /* Scope */
    GArray *cands;              /* Cand */
    GArray *unhandled;          /* Unhandled */
    GPtrArray *sigs;            /* Sig */
    GHashTable *ids;            /* id code -> sig + 1 */
    GPtrArray *touched;
    Elem elem[NPORTS][PTM_MAX_ENDPOINTS];
    int clk_sig[PTM_MAX_ENDPOINTS + 1];
    unsigned clk_bit[PTM_MAX_ENDPOINTS + 1];
    uint64_t time;
    bool timed;                 /* a timestamp was seen */
    uint32_t dirty;             /* probes whose inputs changed */
    uint32_t cur[PROBES];       /* their sample now */
    bool cur_xz[PROBES];
    bool xz;                    /* the sample being built read x/z */
    char *xz_note;              /* the first x/z read as 0 */
} Vcd;

static bool sig_bit(const uint64_t *w, unsigned b)
{
    return w[b / 64] >> (b % 64) & 1;
}

static void set_bit(uint64_t *w, unsigned b)
{
    w[b / 64] |= 1ull << (b % 64);
}

/* Set bits [from, to) of w, a word at a time. */
static void set_bits(uint64_t *w, unsigned from, unsigned to)
{
    while (from < to) {
        unsigned n = MIN(to - from, 64 - from % 64);

        w[from / 64] |= (n == 64 ? ~0ull : (1ull << n) - 1) << (from % 64);
        from += n;
    }
}

/* Reference as written -> lower-case base name and up to two indices. */
static bool parse_ref(const char *ref, char **base, Sel *sel, unsigned *nsel)
{
    g_autoptr(GString) s = g_string_new(NULL);
    const char *q;

    /* extended identifiers (\name(0)\ in GHDL) lose their backslashes */
    for (const char *p = ref; *p; p++) {
        if (*p == '\\') {
            if (p[1] == '\\') {
                g_string_append_c(s, '\\');
                p++;
            }
            continue;
        }
        g_string_append_c(s, g_ascii_tolower(*p));
    }
    q = s->str;
    while (*q && *q != '(' && *q != '[') {
        q++;
    }
    *base = g_strndup(s->str, q - s->str);
    *nsel = 0;
    while (*q) {
        char close = *q == '(' ? ')' : *q == '[' ? ']' : 0;
        char *e;
        Sel sl = { 0 };

        if (!close || *nsel == 2) {
            return false;
        }
        sl.a = g_ascii_strtoll(q + 1, &e, 10);
        if (e == q + 1) {
            return false;
        }
        q = e;
        if (*q == ':' || g_str_has_prefix(q, "downto") ||
            g_str_has_prefix(q, "to")) {
            q += *q == ':' ? 1 : *q == 'd' ? 6 : 2;
            sl.b = g_ascii_strtoll(q, &e, 10);
            if (e == q) {
                return false;
            }
            sl.range = true;
            q = e;
        }
        if (*q != close) {
            return false;
        }
        q++;
        sel[(*nsel)++] = sl;
    }
    return true;
}

/* GHDL's " name is not handled $end": a port it could not dump. */
static void vcd_note_unhandled(Vcd *v, const char *text, unsigned scope,
                               unsigned line)
{
    g_autofree char *lower = g_ascii_strdown(text, -1);
    g_auto(GStrv) w = g_strsplit(g_strstrip(lower), " ", 0);
    int port;

    if (g_strv_length(w) != 5 || strcmp(w[1], "is") || strcmp(w[2], "not") ||
        strcmp(w[3], "handled")) {
        return;
    }
    port = ptm_port_find(w[0]);
    if (port >= 0) {
        Unhandled u = { scope, port, line };

        g_array_append_val(v->unhandled, u);
    }
}

static char *vcd_header(Vcd *v)
{
    Rd *r = &v->rd;
    const char *t;
    size_t n;
    int cur = 0;
    Scope root = { .parent = -1, .path = g_strdup("") };

    g_array_append_val(v->scopes, root);
    while (ptm_rd_token(r, &t, &n)) {
        unsigned line = r->line;

        if (ptm_tok_is(t, n, "$enddefinitions")) {
            while (ptm_rd_token(r, &t, &n) && !ptm_tok_is(t, n, "$end")) {
            }
            return NULL;
        }
        if (ptm_tok_is(t, n, "$scope")) {
            const char *nm;
            size_t nn;
            Scope sc;
            const Scope *par = &g_array_index(v->scopes, Scope, cur);
            g_autofree char *name = NULL;

            if (!ptm_rd_token(r, &t, &n) || !ptm_rd_token(r, &nm, &nn)) {
                return ptm_rd_error(r->path, line, "unfinished $scope");
            }
            name = g_ascii_strdown(nm, nn);
            sc.parent = cur;
            sc.depth = par->depth + 1;
            sc.path = *par->path ? g_strdup_printf("%s.%s", par->path, name)
                                 : g_strdup(name);
            g_array_append_val(v->scopes, sc);
            cur = v->scopes->len - 1;
            while (ptm_rd_token(r, &t, &n) && !ptm_tok_is(t, n, "$end")) {
            }
        } else if (ptm_tok_is(t, n, "$upscope")) {
            if (cur == 0) {
                return ptm_rd_error(r->path, line, "$upscope without $scope");
            }
            cur = g_array_index(v->scopes, Scope, cur).parent;
            while (ptm_rd_token(r, &t, &n) && !ptm_tok_is(t, n, "$end")) {
            }
        } else if (ptm_tok_is(t, n, "$var")) {
            const char *sz, *id;
            size_t szn, idn;
            uint64_t size;
            g_autoptr(GString) ref = g_string_new(NULL);
            g_autofree char *base = NULL;
            Cand c = { .scope = cur, .line = line };
            int port;

            if (!ptm_rd_token(r, &t, &n) || !ptm_rd_token(r, &sz, &szn) ||
                !ptm_rd_token(r, &id, &idn)) {
                return ptm_rd_error(r->path, line, "unfinished $var");
            }
            if (!ptm_parse_u64(sz, szn, &size) || size == 0 || size > 65536) {
                return ptm_rd_error(r->path, line, "bad size '%.*s' in $var",
                                (int)szn, sz);
            }
            while (ptm_rd_token(r, &t, &n) && !ptm_tok_is(t, n, "$end")) {
                g_string_append_len(ref, t, n);
            }
            if (!parse_ref(ref->str, &base, c.sel, &c.nsel)) {
                port = ptm_port_find(base);
                if (port >= 0) {
                    return ptm_rd_error(r->path, line, "cannot read the index "
                                    "of '%s'", ref->str);
                }
                continue;
            }
            port = ptm_port_find(base);
            if (port < 0) {
                continue;
            }
            c.port = port;
            c.size = size;
            c.id = g_strndup(id, idn);
            c.ref = g_strdup(ref->str);
            g_array_append_val(v->cands, c);
        } else if (n && t[0] == '$') {
            /* $date, $version, $timescale, $comment, ...: skipped */
            bool comment = ptm_tok_is(t, n, "$comment");
            g_autoptr(GString) text = g_string_new(NULL);

            while (n < 4 || memcmp(t + n - 4, "$end", 4)) {
                if (!ptm_rd_token(r, &t, &n)) {
                    return ptm_rd_error(r->path, line, "section without $end");
                }
                if (comment && text->len < 200) {
                    g_string_append_printf(text, " %.*s", (int)n, t);
                }
            }
            vcd_note_unhandled(v, text->str, cur, line);
        } else {
            return ptm_rd_error(r->path, line, "unexpected '%.*s' in the "
                            "header", (int)MIN(n, 40), t);
        }
    }
    return ptm_rd_error(r->path, 0, "no $enddefinitions: not a complete VCD "
                    "file");
}

/* The scope whose signals are replayed. */
static char *vcd_pick_scope(Vcd *v, const char *want, unsigned *pick)
{
    unsigned ns = v->scopes->len;
    g_autofree uint32_t *ports = g_new0(uint32_t, ns);
    g_autofree unsigned *count = g_new0(unsigned, ns);
    int best = -1;

    for (unsigned i = 0; i < v->cands->len; i++) {
        const Cand *c = &g_array_index(v->cands, Cand, i);

        if (!(ports[c->scope] >> c->port & 1)) {
            ports[c->scope] |= 1u << c->port;
            count[c->scope]++;
        }
    }
    if (*want) {
        g_autofree char *w = g_ascii_strdown(want, -1);
        char *p = w;

        g_strdelimit(w, "/", '.');
        while (*p == '.') {
            p++;
        }
        while (*p && p[strlen(p) - 1] == '.') {
            p[strlen(p) - 1] = 0;
        }
        for (unsigned s = 0; s < ns; s++) {
            if (!strcmp(g_array_index(v->scopes, Scope, s).path, p)) {
                *pick = s;
                return NULL;
            }
        }
        for (unsigned s = 0; s < ns; s++) {
            if (count[s] && (best < 0 || count[s] > count[best])) {
                best = s;
            }
        }
        return ptm_rd_error(v->rd.path, 0, "no scope '%s'%s%s%s", want,
                        best >= 0 ? " (the ports are in '" : "",
                        best >= 0 ? g_array_index(v->scopes, Scope,
                                                  best).path : "",
                        best >= 0 ? "')" : "");
    }
    /* the most ports; among equals the one nearest the top, then the first */
    for (unsigned s = 0; s < ns; s++) {
        const Scope *sc = &g_array_index(v->scopes, Scope, s);

        if (count[s] && (best < 0 || count[s] > count[best] ||
                         (count[s] == count[best] &&
                          sc->depth < g_array_index(v->scopes, Scope,
                                                    best).depth))) {
            best = s;
        }
    }
    if (best < 0) {
        return ptm_rd_error(v->rd.path, 0, "no port of PCIE_TELEMETRY_MI (such "
                        "as PCIE_CLK, PCIE_MFB_SOF, DMA_CLK) in the file");
    }
    *pick = best;
    return NULL;
}

static Sig *vcd_sig(Vcd *v, const Cand *c, uint32_t *index, char **err)
{
    gpointer got = g_hash_table_lookup(v->ids, c->id);
    Sig *s;

    if (got) {
        *index = GPOINTER_TO_UINT(got) - 1;
        s = g_ptr_array_index(v->sigs, *index);
        if (s->size != c->size) {
            *err = ptm_rd_error(v->rd.path, c->line, "'%s' has %u bits, an "
                            "earlier $var of code '%s' has %u", c->ref,
                            c->size, c->id, s->size);
            return NULL;
        }
        return s;
    }
    s = g_new0(Sig, 1);
    s->size = c->size;
    s->words = (c->size + 63) / 64;
    s->cur_v = g_new0(uint64_t, 4 * s->words);
    s->cur_u = s->cur_v + s->words;
    s->nxt_v = s->cur_u + s->words;
    s->nxt_u = s->nxt_v + s->words;
    /* nothing dumped yet reads as x */
    set_bits(s->cur_u, 0, s->size);
    g_ptr_array_add(v->sigs, s);
    *index = v->sigs->len - 1;
    g_hash_table_insert(v->ids, g_strdup(c->id), GUINT_TO_POINTER(*index + 1));
    return s;
}

static void sig_free(gpointer p)
{
    Sig *s = p;

    g_free(s->cur_v);
    g_free(s);
}

/* Tie a port-named $var of the replayed scope to its port elements. */
static char *vcd_bind(Vcd *v, const Cand *c)
{
    const PortDesc *pd = &ptm_port_tab[c->port];
    const Sel *s0 = &c->sel[0], *s1 = &c->sel[1];
    unsigned elem = 0;          /* ARRAY: the element */
    int64_t first = 0, dir = 1; /* sig bit i -> index first + i * dir */
    bool per_endpoint = pd->kind == PK_EPVEC;
    char why[80];
    unsigned width = ptm_port_width(v->sh, c->port, why, sizeof(why));
    char *err = NULL;
    uint32_t si;
    Sig *sig;
    bool bad = false;

/* the width only of indices known to be in range: others would overflow */
#define RANGE(sl)                                                           \
    do {                                                                    \
        first = (sl)->b;                                                    \
        dir = (sl)->a >= (sl)->b ? 1 : -1;                                  \
        bad = bad ||                                                        \
              (uint64_t)(((sl)->a - (sl)->b) * dir + 1) != c->size;         \
    } while (0)

    for (unsigned i = 0; i < c->nsel; i++) {
        const Sel *sl = &c->sel[i];

        bad |= sl->a < 0 || sl->a > 65535 ||
               (sl->range && (sl->b < 0 || sl->b > 65535));
    }
    if (pd->kind == PK_SCALAR) {
        bad |= c->size != 1 || c->nsel > 1 ||
               (c->nsel == 1 && (s0->a != 0 || (s0->range && s0->b != 0)));
    } else if (pd->kind == PK_EPVEC) {
        /* name: bits are endpoints; name[e] / name(e): one endpoint */
        if (c->nsel == 1 && s0->range) {
            RANGE(s0);
        } else if (c->nsel == 1) {
            first = s0->a;
            bad |= c->size != 1;
        } else {
            bad |= c->nsel != 0;
        }
    } else if (c->nsel == 0) {
        /* a plain vector is element 0 */
    } else if (c->nsel == 1 && s0->range) {
        RANGE(s0);
    } else if (c->nsel == 1 && c->size > 1) {
        elem = s0->a;           /* name(e) / name[e] */
    } else if (c->nsel == 1) {
        first = s0->a;          /* one bit of a vector, written bit by bit */
    } else if (!s0->range && s1->range) {
        elem = s0->a;
        RANGE(s1);
    } else if (!s0->range) {
        elem = s0->a;
        first = s1->a;
        bad |= c->size != 1;
    } else {
        bad = true;
    }
#undef RANGE
    if (bad) {
        return ptm_rd_error(v->rd.path, c->line, "cannot map '%s' (%u bits) onto "
                        "port %s: use a vector, name(e), name[e], "
                        "name(e)[m:l] or one bit", c->ref, c->size,
                        pd->name);
    }
    sig = vcd_sig(v, c, &si, &err);
    if (!sig) {
        return err;
    }
    if (pd->kind == PK_ARRAY && elem >= v->sh->endpoints) {
        return NULL;            /* an endpoint the card does not have */
    }
    /* a vector from bit 0 is a whole element: its width must be the card's */
    if (pd->kind == PK_ARRAY && c->size > 1 &&
        MIN(first, first + (int64_t)(c->size - 1) * dir) == 0 &&
        c->size != width) {
        return ptm_rd_error(v->rd.path, c->line, "'%s' has %u bits, but %s(%u) "
                        "has %u on this card (%s): the card's geometry "
                        "differs from the simulated design", c->ref, c->size,
                        pd->name, elem, width, why);
    }
    for (unsigned i = 0; i < c->size; i++) {
        int64_t idx = first + (int64_t)i * dir;
        unsigned e = per_endpoint ? idx : elem;
        unsigned bit = per_endpoint || pd->kind == PK_SCALAR ? 0 : idx;
        Elem *el;
        BitRef br = { si, i, bit };

        if (e >= v->sh->endpoints) {
            continue;
        }
        if (bit >= width) {
            return ptm_rd_error(v->rd.path, c->line, "'%s' has bit %u, but "
                            "%s(%u) has %u bits on this card (%s)", c->ref,
                            bit, pd->name, e, width, why);
        }
        if (ptm_port_is_clock(c->port)) {
            unsigned slot = pd->kind == PK_SCALAR ? DMA_CLOCK : e;

            if (v->clk_sig[slot] >= 0) {
                return ptm_rd_error(v->rd.path, c->line, "'%s' gives a clock "
                                "that an earlier $var gives already", c->ref);
            }
            v->clk_sig[slot] = si;
            v->clk_bit[slot] = i;
            continue;
        }
        el = &v->elem[c->port][e];
        if (!el->bits) {
            el->bits = g_array_new(FALSE, FALSE, sizeof(BitRef));
            el->width = width;
            el->line = c->line;
            el->v = g_new0(uint64_t, 3 * ((width + 63) / 64));
            el->u = el->v + (width + 63) / 64;
            el->seen = el->u + (width + 63) / 64;
        }
        if (sig_bit(el->seen, bit)) {
            return ptm_rd_error(v->rd.path, c->line, "bit %u of %s(%u) is "
                            "given twice (also on line %u)", bit, pd->name,
                            e, el->line);
        }
        set_bit(el->seen, bit);
        g_array_append_val(el->bits, br);
        sig->probes |= 1u << PROBE_INDEX(e, pd->dom);
        if (c->port == PORT_DMA_RESET) {
            /* one DMA_RESET for the DMA probes of every endpoint */
            for (unsigned k = 0; k < v->sh->endpoints; k++) {
                sig->probes |= 1u << PROBE_INDEX(k, PTM_DOMAIN_DMA);
            }
        }
    }
    return NULL;
}

/*
 * A port that GHDL could not dump (an array of vectors) and that the scope
 * has in no other form would replay as idle: say so instead.
 */
static char *vcd_check_unhandled(Vcd *v, unsigned scope)
{
    for (unsigned i = 0; i < v->unhandled->len; i++) {
        const Unhandled *u = &g_array_index(v->unhandled, Unhandled, i);
        bool found = false;

        if (u->scope != scope) {
            continue;
        }
        for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
            found |= v->elem[u->port][e].bits != NULL;
        }
        if (!found) {
            return ptm_rd_error(v->rd.path, u->line, "the simulator left out %s "
                            "(GHDL writes no arrays of vectors to VCD): "
                            "record it per endpoint, as a plain vector for "
                            "endpoint 0 or as signals named like "
                            "\\%s(0)\\ (see docs/replay.md)",
                            ptm_port_tab[u->port].name, ptm_port_tab[u->port].name);
        }
    }
    return NULL;
}

/* Every sampled port needs the clock of its domain. */
static char *vcd_check_clocks(Vcd *v)
{
    bool any = v->clk_sig[DMA_CLOCK] >= 0;

    for (unsigned e = 0; e < v->sh->endpoints; e++) {
        any |= v->clk_sig[e] >= 0;
        for (unsigned p = 0; p < NPORTS; p++) {
            const Elem *el = &v->elem[p][e];
            PtmDomain d = ptm_port_tab[p].dom;
            int clk = v->clk_sig[d == PTM_DOMAIN_PCIE ? e : DMA_CLOCK];

            if (!el->bits) {
                continue;
            }
            any = true;
            if (clk < 0) {
                return ptm_rd_error(v->rd.path, el->line, "%s(%u) has no clock "
                                "to sample it: the file lacks %s", 
                                ptm_port_tab[p].name, e,
                                d == PTM_DOMAIN_PCIE ? "PCIE_CLK" : "DMA_CLK");
            }
        }
    }
    if (!any) {
        return ptm_rd_error(v->rd.path, 0, "no port of PCIE_TELEMETRY_MI that "
                        "this card has (endpoints 0 to %u)",
                        v->sh->endpoints - 1);
    }
    return NULL;
}

/* Bits [lo, lo + n) of element e of a port; x/z read as 0 and noted. */
static uint32_t vcd_get(Vcd *v, unsigned port, unsigned e, unsigned lo,
                        unsigned n)
{
    const Elem *el = &v->elem[port][e];
    uint32_t r = 0;

    if (!el->bits) {
        return 0;
    }
    for (unsigned i = 0; i < n; i++) {
        unsigned b = lo + i;

        if (sig_bit(el->u, b)) {
            if (!v->xz_note) {
                v->xz_note = g_strdup_printf("%s(%u) bit %u at time %"
                                             PRIu64, ptm_port_tab[port].name, e,
                                             b, v->time);
            }
            v->xz = true;
            continue;
        }
        r |= (uint32_t)sig_bit(el->v, b) << i;
    }
    return r;
}

static void vcd_assemble(Vcd *v, unsigned port, unsigned e)
{
    Elem *el = &v->elem[port][e];
    unsigned words = (el->width + 63) / 64;

    memset(el->v, 0, 2 * words * sizeof(uint64_t));
    for (unsigned i = 0; i < el->bits->len; i++) {
        const BitRef *br = &g_array_index(el->bits, BitRef, i);
        const Sig *s = g_ptr_array_index(v->sigs, br->sig);

        if (sig_bit(s->cur_u, br->sig_bit)) {
            set_bit(el->u, br->elem_bit);
        } else if (sig_bit(s->cur_v, br->sig_bit)) {
            set_bit(el->v, br->elem_bit);
        }
    }
}

/* What probe (e, d) sees now; fields that no counter reads stay unread. */
static void vcd_decode(Vcd *v, unsigned e, PtmDomain d, Sample *s)
{
    const Shape *sh = v->sh;
    unsigned B = sh->buses[d], R = sh->regions[d], W = sh->pos_width[d];
    bool pcie = d == PTM_DOMAIN_PCIE;
    unsigned p_sof = pcie ? PORT_PCIE_SOF : PORT_DMA_SOF;
    unsigned p_eof = pcie ? PORT_PCIE_EOF : PORT_DMA_EOF;
    unsigned p_pos = pcie ? PORT_PCIE_EOF_POS : PORT_DMA_EOF_POS;
    unsigned p_src = pcie ? PORT_PCIE_SRC_RDY : PORT_DMA_SRC_RDY;
    unsigned p_dst = pcie ? PORT_PCIE_DST_RDY : PORT_DMA_DST_RDY;

    for (unsigned p = 0; p < NPORTS; p++) {
        if (ptm_port_tab[p].dom == d && v->elem[p][e].bits) {
            vcd_assemble(v, p, e);
        }
    }
    ptm_sample_idle(sh, s);
    v->xz = false;
    if (pcie) {
        s->reset = vcd_get(v, PORT_PCIE_RESET, e, 0, 1);
    } else if (v->elem[PORT_DMA_RESET][0].bits) {
        vcd_assemble(v, PORT_DMA_RESET, 0);
        s->reset = vcd_get(v, PORT_DMA_RESET, 0, 0, 1);
    }
    for (unsigned b = 0; b < B; b++) {
        SampleBus *sb = &s->bus[b];

        sb->src = vcd_get(v, p_src, e, b, 1);
        if (sb->src) {
            sb->dst = vcd_get(v, p_dst, e, b, 1);
            sb->sof = vcd_get(v, p_sof, e, b * R, R);
            sb->eof = vcd_get(v, p_eof, e, b * R, R);
            for (unsigned r = 0; r < R; r++) {
                if (sb->eof >> r & 1) {
                    sb->pos[r] = vcd_get(v, p_pos, e, (b * R + r) * W, W);
                }
            }
        }
        if (!pcie) {
            sb->msrc = vcd_get(v, PORT_MVB_SRC_RDY, e, b, 1);
            if (sb->msrc) {
                sb->mdst = vcd_get(v, PORT_MVB_DST_RDY, e, b, 1);
                sb->vld = vcd_get(v, PORT_MVB_VLD, e, b * R, R);
            }
        }
    }
    if (!pcie) {
        return;
    }
    s->brake = vcd_get(v, PORT_BRAKE, e, 0, 6);
    if (v->elem[PORT_TAG_FREE][e].bits) {
        s->tags = vcd_get(v, PORT_TAG_FREE, e, 0, 11);
    }
    if (v->elem[PORT_STFIFO_FREE][e].bits) {
        s->stfifo = vcd_get(v, PORT_STFIFO_FREE, e, 0, 16);
    }
    if (v->elem[PORT_LINK_UP][e].bits) {
        s->link = vcd_get(v, PORT_LINK_UP, e, 0, 1);
    }
    if (v->elem[PORT_MPS][e].bits) {
        s->set_mask |= SET_MPS;
        s->set.mps = vcd_get(v, PORT_MPS, e, 0, 3);
    }
    if (v->elem[PORT_MRRS][e].bits) {
        s->set_mask |= SET_MRRS;
        s->set.mrrs = vcd_get(v, PORT_MRRS, e, 0, 3);
    }
    if (v->elem[PORT_EXT_TAG][e].bits) {
        s->set_mask |= SET_EXT_TAG;
        s->set.ext_tag = vcd_get(v, PORT_EXT_TAG, e, 0, 1);
    }
    if (v->elem[PORT_TAG_10B][e].bits) {
        s->set_mask |= SET_TAG_10B;
        s->set.tag_10bit = vcd_get(v, PORT_TAG_10B, e, 0, 1);
    }
    if (v->elem[PORT_RCB][e].bits) {
        s->set_mask |= SET_RCB;
        s->set.rcb_128 = vcd_get(v, PORT_RCB, e, 0, 1);
    }
}

/* One more cycle of probe (e, d): a rising edge of its clock. */
static void vcd_sample(Vcd *v, unsigned e, PtmDomain d)
{
    unsigned pi = PROBE_INDEX(e, d);

    if (v->dirty >> pi & 1) {
        Sample s;

        vcd_decode(v, e, d, &s);
        v->cur[pi] = ptm_trace_add(v->t, e, d, &s, 1);
        v->cur_xz[pi] = v->xz;
        v->dirty &= ~(1u << pi);
    } else {
        ptm_trace_push(&v->t->probe[pi], v->cur[pi], 1);
    }
    if (v->cur_xz[pi]) {
        v->t->xz_cycles++;
    }
}

/* Is clock slot c rising at this timestamp (known 0 before, 1 after)? */
static bool vcd_rising(Vcd *v, unsigned c)
{
    const Sig *s;
    unsigned b = v->clk_bit[c];

    if (v->clk_sig[c] < 0) {
        return false;
    }
    s = g_ptr_array_index(v->sigs, v->clk_sig[c]);
    return s->touched && !sig_bit(s->cur_u, b) && !sig_bit(s->cur_v, b) &&
           !sig_bit(s->nxt_u, b) && sig_bit(s->nxt_v, b);
}

/* End of a timestamp: sample at the rising edges, then take the changes. */
static void vcd_timestamp_done(Vcd *v)
{
    for (unsigned e = 0; e < v->sh->endpoints; e++) {
        if (vcd_rising(v, e)) {
            vcd_sample(v, e, PTM_DOMAIN_PCIE);
        }
    }
    if (vcd_rising(v, DMA_CLOCK)) {
        for (unsigned e = 0; e < v->sh->endpoints; e++) {
            vcd_sample(v, e, PTM_DOMAIN_DMA);
        }
    }
    for (unsigned i = 0; i < v->touched->len; i++) {
        Sig *s = g_ptr_array_index(v->touched, i);

        memcpy(s->cur_v, s->nxt_v, 2 * s->words * sizeof(uint64_t));
        s->touched = false;
        v->dirty |= s->probes;
    }
    g_ptr_array_set_size(v->touched, 0);
}

static int logic_value(char c)
{
    switch (c) {
    case '0': case 'l': case 'L':
        return 0;
    case '1': case 'h': case 'H':
        return 1;
    case 'x': case 'X': case 'z': case 'Z': case 'u': case 'U':
    case 'w': case 'W': case '-':
        return 2;
    default:
        return -1;
    }
}

/* A value change of a needed signal (vector digits, most significant first). */
static char *vcd_change(Vcd *v, Sig *s, const char *val, size_t len)
{
    int pad;

    /* longer than the signal: only leading zeros may go */
    while (len > s->size && (val[0] == '0' || val[0] == 'l' ||
                             val[0] == 'L')) {
        val++;
        len--;
    }
    if (len > s->size || len == 0) {
        return ptm_rd_error(v->rd.path, v->rd.line, "value '%.*s' does not fit "
                        "%u bits", (int)MIN(len, 80), val, s->size);
    }
    /*
     * a shorter value extends 0 and 1 with 0, x and z with themselves: the
     * extension a word at a time, as a short value of a wide signal must
     * not cost a loop over its bits
     */
    pad = logic_value(val[0]) == 2 ? 2 : 0;
    memset(s->nxt_v, 0, 2 * s->words * sizeof(uint64_t));
    if (pad) {
        set_bits(s->nxt_u, len, s->size);
    }
    for (unsigned b = 0; b < len; b++) {
        int x = logic_value(val[len - 1 - b]);

        if (x < 0) {
            return ptm_rd_error(v->rd.path, v->rd.line, "bad value '%.*s'",
                            (int)MIN(len, 80), val);
        }
        if (x == 2) {
            set_bit(s->nxt_u, b);
        } else if (x) {
            set_bit(s->nxt_v, b);
        }
    }
    if (!s->touched) {
        s->touched = true;
        g_ptr_array_add(v->touched, s);
    }
    return NULL;
}

static Sig *vcd_lookup(Vcd *v, const char *id, size_t n)
{
    char buf[64];
    g_autofree char *big = NULL;
    char *key = buf;
    gpointer got;

    if (n >= sizeof(buf)) {
        key = big = g_malloc(n + 1);
    }
    memcpy(key, id, n);
    key[n] = 0;
    got = g_hash_table_lookup(v->ids, key);
    return got ? g_ptr_array_index(v->sigs, GPOINTER_TO_UINT(got) - 1) : NULL;
}

static char *vcd_body(Vcd *v)
{
    Rd *r = &v->rd;
    const char *t, *id;
    size_t n, idn;
    char *err;

    while (ptm_rd_token(r, &t, &n)) {
        Sig *s;

        switch (t[0]) {
        case '#': {
            uint64_t time;

            if (!ptm_parse_u64(t + 1, n - 1, &time)) {
                return ptm_rd_error(r->path, r->line, "bad timestamp '%.*s'",
                                (int)MIN(n, 40), t);
            }
            if (v->timed && time < v->time) {
                return ptm_rd_error(r->path, r->line, "time goes back from %"
                                PRIu64 " to %" PRIu64, v->time, time);
            }
            vcd_timestamp_done(v);
            v->time = time;
            v->timed = true;
            break;
        }
        case '$':
            if (ptm_tok_is(t, n, "$comment")) {
                unsigned line = r->line;

                while (!ptm_tok_is(t, n, "$end")) {
                    if (!ptm_rd_token(r, &t, &n)) {
                        return ptm_rd_error(r->path, line, "$comment without "
                                        "$end");
                    }
                }
            } else if (!ptm_tok_is(t, n, "$dumpvars") &&
                       !ptm_tok_is(t, n, "$dumpall") &&
                       !ptm_tok_is(t, n, "$dumpon") &&
                       !ptm_tok_is(t, n, "$dumpoff") && !ptm_tok_is(t, n, "$end")) {
                return ptm_rd_error(r->path, r->line, "unexpected '%.*s'",
                                (int)MIN(n, 40), t);
            }
            break;
        case 'b': case 'B': case 'r': case 'R': case 's': case 'S':
            if (!ptm_rd_token(r, &id, &idn)) {
                return ptm_rd_error(r->path, r->line, "value without identifier "
                                "code");
            }
            s = vcd_lookup(v, id, idn);
            if (!s) {
                break;
            }
            if (t[0] != 'b' && t[0] != 'B') {
                return ptm_rd_error(r->path, r->line, "a port cannot take the "
                                "value '%.*s'", (int)MIN(n, 40), t);
            }
            err = vcd_change(v, s, t + 1, n - 1);
            if (err) {
                return err;
            }
            break;
        default:
            if (logic_value(t[0]) < 0 || n < 2) {
                return ptm_rd_error(r->path, r->line, "unexpected '%.*s'",
                                (int)MIN(n, 40), t);
            }
            s = vcd_lookup(v, t + 1, n - 1);
            if (s) {
                err = vcd_change(v, s, t, 1);
                if (err) {
                    return err;
                }
            }
            break;
        }
    }
    vcd_timestamp_done(v);
    return NULL;
}

char *ptm_vcd_load(PtmReplayTrace *t, const char *path, const char *scope,
                      const char *buf, size_t len)
{
    Vcd v = {
        .rd = { .path = path, .p = buf, .end = buf + len, .line = 1 },
        .t = t,
        .sh = &t->sh,
        .scopes = g_array_new(FALSE, FALSE, sizeof(Scope)),
        .cands = g_array_new(FALSE, FALSE, sizeof(Cand)),
        .unhandled = g_array_new(FALSE, FALSE, sizeof(Unhandled)),
        .sigs = g_ptr_array_new_with_free_func(sig_free),
        .ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .touched = g_ptr_array_new(),
        .dirty = ~0u,
    };
    unsigned pick = 0;
    char *err;

    for (unsigned c = 0; c <= DMA_CLOCK; c++) {
        v.clk_sig[c] = -1;
    }
    err = vcd_header(&v);
    if (!err) {
        err = vcd_pick_scope(&v, scope, &pick);
    }
    for (unsigned i = 0; !err && i < v.cands->len; i++) {
        const Cand *c = &g_array_index(v.cands, Cand, i);

        if (c->scope == pick) {
            err = vcd_bind(&v, c);
        }
    }
    if (!err) {
        err = vcd_check_unhandled(&v, pick);
    }
    if (!err) {
        err = vcd_check_clocks(&v);
    }
    if (!err) {
        err = vcd_body(&v);
    }
    if (!err && v.xz_note) {
        g_message("replay: %s: x/z read as 0 in %" PRIu64 " probe cycles, "
                  "first %s", path, t->xz_cycles, v.xz_note);
    }

    for (unsigned i = 0; i < v.scopes->len; i++) {
        g_free(g_array_index(v.scopes, Scope, i).path);
    }
    for (unsigned i = 0; i < v.cands->len; i++) {
        g_free(g_array_index(v.cands, Cand, i).id);
        g_free(g_array_index(v.cands, Cand, i).ref);
    }
    for (unsigned p = 0; p < NPORTS; p++) {
        for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
            if (v.elem[p][e].bits) {
                g_array_free(v.elem[p][e].bits, TRUE);
                g_free(v.elem[p][e].v);
            }
        }
    }
    g_array_free(v.scopes, TRUE);
    g_array_free(v.cands, TRUE);
    g_array_free(v.unhandled, TRUE);
    g_ptr_array_free(v.sigs, TRUE);
    g_hash_table_destroy(v.ids);
    g_ptr_array_free(v.touched, TRUE);
    g_free(v.xz_note);
    return err;
}

/* --------------------------------------------------------- text traces */

/* Bus of a text field prefix ("rq", "up1", ...); -1 if none. */
