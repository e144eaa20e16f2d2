/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Saved readings read back: the documents of -j ({"seconds": ..., "data":
 * {...}}, the reference reader's schema) into ptl_data, and a stream of
 * such documents (a watch's output) split as each one completes.
 *
 * The schema is checked strictly, so that what is rendered is what was
 * saved: every key with its type, no unknown key (it would be lost on the
 * way out; "port", what the port above the card counted, is this tool's
 * own and may be left out), the endpoints in order with their index, the buses of the
 * configured DMA ports under the reference's names and in its order, every
 * histogram with hist_bands bands.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-telemetry.h"

/* ------------------------------------------------------------- schema */

typedef struct ctx {
    ptl_error *err;
    char path[192];             /* key path of the value being checked */
} ctx;

static ptl_err __attribute__((format(printf, 3, 4)))
bad(ctx *c, const ptl_json *v, const char *fmt, ...)
{
    char what[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return ptl_set_error(c->err, PTL_E_USAGE, "line %u, column %u: %s: %s",
                         v->line, v->column, c->path[0] ? c->path : "document",
                         what);
}

/* Appends a component to the path; returns the old length to restore. */
static size_t push(ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static size_t push(ctx *c, const char *fmt, ...)
{
    size_t n = strlen(c->path);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->path + n, sizeof(c->path) - n, fmt, ap);
    va_end(ap);
    return n;
}

static void pop(ctx *c, size_t n)
{
    c->path[n] = '\0';
}

static const char *type_name(const ptl_json *v)
{
    static const char *const name[] = {
        "null", "false", "true", "a number", "a string", "an array",
        "an object",
    };

    return name[v->type];
}

/*
 * An object with these keys (in any order) and no other; the first
 * required of them must be there.
 */
static ptl_err want_object_opt(ctx *c, const ptl_json *v,
                               const char *const *keys, unsigned nkeys,
                               unsigned required)
{
    if (v->type != PTL_JSON_OBJECT) {
        return bad(c, v, "expected an object, found %s", type_name(v));
    }
    for (size_t i = 0; i < v->n; i++) {
        bool known = false;

        for (unsigned k = 0; k < nkeys && !known; k++) {
            known = !strcmp(v->keys[i], keys[k]);
        }
        if (!known) {
            return bad(c, &v->items[i], "unknown key \"%.64s\"", v->keys[i]);
        }
    }
    for (unsigned k = 0; k < required; k++) {
        if (!ptl_json_get(v, keys[k])) {
            return bad(c, v, "missing key \"%s\"", keys[k]);
        }
    }
    return PTL_OK;
}

/* An object with exactly these keys (in any order). */
static ptl_err want_object(ctx *c, const ptl_json *v,
                           const char *const *keys, unsigned nkeys)
{
    return want_object_opt(c, v, keys, nkeys, nkeys);
}

static ptl_err get_uint(ctx *c, const ptl_json *obj, const char *key,
                        uint64_t max, uint64_t *out)
{
    const ptl_json *v = ptl_json_get(obj, key);
    size_t n = push(c, ".%s", key);

    if (v->type != PTL_JSON_NUMBER || !v->is_uint || v->uint > max) {
        ptl_err e = bad(c, v, "expected an integer from 0 to %llu, found %s",
                        (unsigned long long)max,
                        v->type == PTL_JSON_NUMBER ? "another number"
                                                   : type_name(v));
        pop(c, n);
        return e;
    }
    *out = v->uint;
    pop(c, n);
    return PTL_OK;
}

static ptl_err get_unsigned(ctx *c, const ptl_json *obj, const char *key,
                            unsigned max, unsigned *out)
{
    uint64_t v;
    ptl_err e = get_uint(c, obj, key, max, &v);

    *out = (unsigned)v;
    return e;
}

static ptl_err get_bool(ctx *c, const ptl_json *obj, const char *key,
                        bool *out)
{
    const ptl_json *v = ptl_json_get(obj, key);

    if (v->type != PTL_JSON_TRUE && v->type != PTL_JSON_FALSE) {
        size_t n = push(c, ".%s", key);
        ptl_err e = bad(c, v, "expected true or false, found %s",
                        type_name(v));

        pop(c, n);
        return e;
    }
    *out = v->type == PTL_JSON_TRUE;
    return PTL_OK;
}

/*
 * A list of counts: exactly `exact` items (UINT_MAX: up to max_items),
 * into a new array of at least one element.
 */
static ptl_err get_counts(ctx *c, const ptl_json *v, unsigned exact,
                          unsigned max_items, uint64_t **out, unsigned *n)
{
    if (v->type != PTL_JSON_ARRAY) {
        return bad(c, v, "expected an array, found %s", type_name(v));
    }
    if (exact != UINT_MAX && v->n != exact) {
        return bad(c, v, "expected %u items, found %zu", exact, v->n);
    }
    if (v->n > max_items) {
        return bad(c, v, "more than %u items", max_items);
    }
    *out = calloc(v->n + 1, sizeof(uint64_t));
    if (!*out) {
        return ptl_set_error(c->err, PTL_E_INTERNAL, "out of memory");
    }
    *n = (unsigned)v->n;
    for (size_t i = 0; i < v->n; i++) {
        const ptl_json *it = &v->items[i];

        if (it->type != PTL_JSON_NUMBER || !it->is_uint) {
            size_t len = push(c, "[%zu]", i);
            ptl_err e = bad(c, it, "expected an integer from 0 to %llu, "
                            "found %s", (unsigned long long)UINT64_MAX,
                            it->type == PTL_JSON_NUMBER ? "another number"
                                                        : type_name(it));

            pop(c, len);
            return e;
        }
        (*out)[i] = it->uint;
    }
    return PTL_OK;
}

static const char *const bus_keys[] = {
    "words", "backpressure", "transactions", "mvb", "mvb_backpressure",
    "items", "regions", "region_bytes", "pcie_clk", "has_mvb", "dma_up",
};

static ptl_err read_bus(ctx *c, const ptl_json *v, ptl_bus *bus)
{
    ptl_err e;

    if ((e = want_object(c, v, bus_keys, 11)) ||
        (e = get_uint(c, v, "words", UINT64_MAX, &bus->words)) ||
        (e = get_uint(c, v, "backpressure", UINT64_MAX,
                      &bus->backpressure)) ||
        (e = get_uint(c, v, "transactions", UINT64_MAX,
                      &bus->transactions)) ||
        (e = get_uint(c, v, "mvb", UINT64_MAX, &bus->mvb)) ||
        (e = get_uint(c, v, "mvb_backpressure", UINT64_MAX,
                      &bus->mvb_backpressure)) ||
        (e = get_uint(c, v, "items", UINT64_MAX, &bus->items)) ||
        (e = get_unsigned(c, v, "region_bytes", 65535,
                          &bus->region_bytes)) ||
        (e = get_bool(c, v, "pcie_clk", &bus->pcie_clk)) ||
        (e = get_bool(c, v, "has_mvb", &bus->has_mvb)) ||
        (e = get_bool(c, v, "dma_up", &bus->dma_up))) {
        return e;
    }
    {
        size_t n = push(c, ".regions");

        e = get_counts(c, ptl_json_get(v, "regions"), UINT_MAX, 255,
                       &bus->regions, &bus->nregions);
        pop(c, n);
    }
    return e;
}

static const char *const ep_keys[] = {
    "index", "link_up", "mps", "mrrs", "ext_tag", "tag_10b", "rcb",
    "tags_free", "tags_free_min", "stfifo_free", "stfifo_free_min",
    "pcie_cycles", "dma_cycles", "brakes", "hists", "buses",
};

static ptl_err read_endpoint(ctx *c, const ptl_json *v, unsigned index,
                             const ptl_layout *l, ptl_endpoint *ep)
{
    const ptl_json *hists, *buses;
    unsigned idx;
    ptl_err e;
    size_t n;

    if ((e = want_object(c, v, ep_keys, 16)) ||
        (e = get_unsigned(c, v, "index", UINT_MAX, &idx)) ||
        (e = get_bool(c, v, "link_up", &ep->link_up)) ||
        (e = get_unsigned(c, v, "mps", UINT_MAX, &ep->mps)) ||
        (e = get_unsigned(c, v, "mrrs", UINT_MAX, &ep->mrrs)) ||
        (e = get_bool(c, v, "ext_tag", &ep->ext_tag)) ||
        (e = get_bool(c, v, "tag_10b", &ep->tag_10b)) ||
        (e = get_unsigned(c, v, "rcb", UINT_MAX, &ep->rcb)) ||
        (e = get_unsigned(c, v, "tags_free", 65535, &ep->tags_free)) ||
        (e = get_unsigned(c, v, "tags_free_min", 65535,
                          &ep->tags_free_min)) ||
        (e = get_unsigned(c, v, "stfifo_free", 65535, &ep->stfifo_free)) ||
        (e = get_unsigned(c, v, "stfifo_free_min", 65535,
                          &ep->stfifo_free_min)) ||
        (e = get_uint(c, v, "pcie_cycles", UINT64_MAX, &ep->pcie_cycles)) ||
        (e = get_uint(c, v, "dma_cycles", UINT64_MAX, &ep->dma_cycles))) {
        return e;
    }
    if (idx != index) {
        n = push(c, ".index");
        e = bad(c, ptl_json_get(v, "index"), "expected %u (the position in "
                "the list), found %u", index, idx);
        pop(c, n);
        return e;
    }
    ep->index = idx;
    n = push(c, ".brakes");
    e = get_counts(c, ptl_json_get(v, "brakes"), UINT_MAX, 255, &ep->brakes,
                   &ep->nbrakes);
    pop(c, n);
    if (e) {
        return e;
    }

    hists = ptl_json_get(v, "hists");
    n = push(c, ".hists");
    if (hists->type != PTL_JSON_ARRAY) {
        e = bad(c, hists, "expected an array, found %s", type_name(hists));
    } else if (hists->n > 255) {
        e = bad(c, hists, "more than 255 items");
    }
    if (e) {
        pop(c, n);
        return e;
    }
    ep->nhists = (unsigned)hists->n;
    ep->nbands = l->hist_bands;
    ep->hists = calloc((size_t)ep->nhists * ep->nbands + 1,
                       sizeof(uint64_t));
    if (!ep->hists) {
        pop(c, n);
        return ptl_set_error(c->err, PTL_E_INTERNAL, "out of memory");
    }
    for (unsigned h = 0; h < ep->nhists && !e; h++) {
        size_t m = push(c, "[%u]", h);
        uint64_t *bands = NULL;
        unsigned nb;

        e = get_counts(c, &hists->items[h], l->hist_bands, 255, &bands, &nb);
        if (!e) {
            memcpy(ep->hists + (size_t)h * ep->nbands, bands,
                   nb * sizeof(uint64_t));
        }
        free(bands);
        pop(c, m);
    }
    pop(c, n);
    if (e) {
        return e;
    }

    buses = ptl_json_get(v, "buses");
    n = push(c, ".buses");
    ep->nbuses = 2 + 2 * l->dma_ports;
    if (buses->type != PTL_JSON_OBJECT) {
        e = bad(c, buses, "expected an object, found %s", type_name(buses));
    } else if (buses->n != ep->nbuses) {
        e = bad(c, buses, "expected %u buses (%u DMA ports), found %zu",
                ep->nbuses, l->dma_ports, buses->n);
    } else if (!(ep->buses = calloc(ep->nbuses, sizeof(ptl_bus)))) {
        e = ptl_set_error(c->err, PTL_E_INTERNAL, "out of memory");
    }
    for (unsigned b = 0; b < ep->nbuses && !e; b++) {
        ptl_bus *bus = &ep->buses[b];
        size_t m;

        if (b < 2) {
            bus->kind = b ? PTL_BUS_RC : PTL_BUS_RQ;
            strcpy(bus->name, b ? "PCIe -> PTC (RC)" : "PTC -> PCIe (RQ)");
        } else {
            bus->port = (b - 2) / 2;
            bus->kind = b & 1 ? PTL_BUS_DOWN : PTL_BUS_UP;
            snprintf(bus->name, sizeof(bus->name),
                     b & 1 ? "PTC -> DMA%u (DOWN)" : "DMA%u -> PTC (UP)",
                     bus->port);
        }
        if (strcmp(buses->keys[b], bus->name) != 0) {
            e = bad(c, &buses->items[b], "expected the bus \"%s\" here, "
                    "found \"%.64s\"", bus->name, buses->keys[b]);
            break;
        }
        m = push(c, "[\"%s\"]", bus->name);
        e = read_bus(c, &buses->items[b], bus);
        pop(c, m);
    }
    pop(c, n);
    return e;
}

static const char *const config_keys[] = {
    "pcie_endpoints", "dma_ports", "probe_pcie_regions", "probe_dma_regions",
    "counter_width", "item_bytes", "drain_period", "hist_bands",
    "tag_capacity", "stfifo_capacity",
};

static ptl_err read_config(ctx *c, const ptl_json *v, ptl_layout *l)
{
    ptl_err e;
    size_t n = push(c, ".config");

    if ((e = want_object(c, v, config_keys, 10)) ||
        (e = get_unsigned(c, v, "pcie_endpoints", 255, &l->endpoints)) ||
        (e = get_unsigned(c, v, "dma_ports", 255, &l->dma_ports)) ||
        (e = get_unsigned(c, v, "probe_pcie_regions", 255,
                          &l->pcie_regions)) ||
        (e = get_unsigned(c, v, "probe_dma_regions", 255,
                          &l->dma_regions)) ||
        (e = get_unsigned(c, v, "counter_width", 64, &l->cnt_width)) ||
        (e = get_unsigned(c, v, "item_bytes", 255, &l->item_bytes)) ||
        (e = get_unsigned(c, v, "drain_period", 65536, &l->drain_period)) ||
        (e = get_unsigned(c, v, "hist_bands", 255, &l->hist_bands)) ||
        (e = get_unsigned(c, v, "tag_capacity", 65535, &l->tag_capacity)) ||
        (e = get_unsigned(c, v, "stfifo_capacity", 65535,
                          &l->stfifo_capacity))) {
        pop(c, n);
        return e;
    }
    pop(c, n);
    l->magic = PTL_MAGIC;
    l->version = PTL_VERSION_MAJOR << 16;
    l->probes = 2 * l->endpoints;
    return PTL_OK;
}

/* "port" is there only when the port above the card was counted too */
static const char *const top_keys[] = { "seconds", "data", "port" };
static const char *const port_keys[] = {
    "device", "pmu", "card", "endpoint", "rx", "tx",
};
static const char *const count_keys[] = {
    "event", "value", "seconds", "enabled_seconds",
};

static ptl_err get_string(ctx *c, const ptl_json *obj, const char *key,
                          char *buf, size_t len)
{
    const ptl_json *v = ptl_json_get(obj, key);
    size_t n = push(c, ".%s", key);
    ptl_err e = PTL_OK;

    if (v->type != PTL_JSON_STRING) {
        e = bad(c, v, "expected a string, found %s", type_name(v));
    } else if (strlen(v->string) >= len) {
        e = bad(c, v, "longer than %zu bytes", len - 1);
    } else {
        memcpy(buf, v->string, strlen(v->string) + 1);
    }
    pop(c, n);
    return e;
}

static ptl_err get_seconds(ctx *c, const ptl_json *obj, const char *key,
                           double *out)
{
    const ptl_json *v = ptl_json_get(obj, key);
    size_t n = push(c, ".%s", key);
    ptl_err e = PTL_OK;

    if (v->type != PTL_JSON_NUMBER || !isfinite(v->number) ||
        v->number < 0) {
        e = bad(c, v, "expected a number of seconds from 0");
    } else {
        *out = v->number;
    }
    pop(c, n);
    return e;
}

static ptl_err read_port_count(ctx *c, const ptl_json *port, const char *key,
                               ptl_port_count *pc)
{
    const ptl_json *v = ptl_json_get(port, key);
    size_t n = push(c, ".%s", key);
    ptl_err e;

    memset(pc, 0, sizeof(*pc));
    if (v->type == PTL_JSON_NULL) {
        pop(c, n);
        return PTL_OK;          /* not counted in this interval */
    }
    if (!(e = want_object(c, v, count_keys, 4)) &&
        !(e = get_string(c, v, "event", pc->event, sizeof(pc->event))) &&
        !(e = get_uint(c, v, "value", UINT64_MAX, &pc->value)) &&
        !(e = get_seconds(c, v, "seconds", &pc->seconds)) &&
        !(e = get_seconds(c, v, "enabled_seconds", &pc->enabled_seconds))) {
        pc->measured = true;
    }
    pop(c, n);
    return e;
}

/* What the port above the card counted, or NULL without "port". */
static ptl_err read_port(ctx *c, const ptl_json *doc, ptl_port_data **out)
{
    const ptl_json *v = ptl_json_get(doc, "port");
    ptl_port_data *p;
    ptl_err e;

    *out = NULL;
    if (!v) {
        return PTL_OK;
    }
    c->path[0] = '\0';
    push(c, "port");
    if ((e = want_object(c, v, port_keys, 6))) {
        return e;
    }
    p = calloc(1, sizeof(*p));
    if (!p) {
        return ptl_set_error(c->err, PTL_E_INTERNAL, "out of memory");
    }
    if ((e = get_string(c, v, "device", p->port, sizeof(p->port))) ||
        (e = get_string(c, v, "pmu", p->pmu, sizeof(p->pmu))) ||
        (e = get_string(c, v, "card", p->card, sizeof(p->card))) ||
        (e = get_unsigned(c, v, "endpoint", 65535, &p->endpoint)) ||
        (e = read_port_count(c, v, "rx", &p->rx)) ||
        (e = read_port_count(c, v, "tx", &p->tx))) {
        free(p);
        return e;
    }
    *out = p;
    return PTL_OK;
}

static const char *const data_keys[] = { "endpoints", "status", "config" };
static const char *const status_keys[] = {
    "busy", "lost_deltas", "readout_overrun",
};

ptl_err ptl_data_from_json(const ptl_json *doc, ptl_data **out,
                           double *seconds, ptl_error *err)
{
    ctx c = { .err = err };
    const ptl_json *sec, *data, *status, *eps;
    ptl_data *d;
    ptl_err e;
    size_t n;

    *out = NULL;
    if ((e = want_object_opt(&c, doc, top_keys, 3, 2))) {
        return e;
    }
    sec = ptl_json_get(doc, "seconds");
    if (sec->type == PTL_JSON_NULL) {
        *seconds = 0;
    } else if (sec->type == PTL_JSON_NUMBER && isfinite(sec->number) &&
               sec->number > 0) {
        *seconds = sec->number;
    } else {
        n = push(&c, "seconds");
        e = bad(&c, sec, "expected null (totals) or a number above 0");
        pop(&c, n);
        return e;
    }
    data = ptl_json_get(doc, "data");
    n = push(&c, "data");
    if ((e = want_object(&c, data, data_keys, 3))) {
        return e;
    }
    d = calloc(1, sizeof(*d));
    if (!d) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    status = ptl_json_get(data, "status");
    {
        size_t m = push(&c, ".status");

        if ((e = want_object(&c, status, status_keys, 3)) ||
            (e = get_bool(&c, status, "busy", &d->busy)) ||
            (e = get_bool(&c, status, "lost_deltas", &d->lost_deltas)) ||
            (e = get_bool(&c, status, "readout_overrun",
                          &d->readout_overrun))) {
            goto fail;
        }
        pop(&c, m);
    }
    if ((e = read_config(&c, ptl_json_get(data, "config"), &d->config))) {
        goto fail;
    }
    eps = ptl_json_get(data, "endpoints");
    push(&c, ".endpoints");
    if (eps->type != PTL_JSON_ARRAY) {
        e = bad(&c, eps, "expected an array, found %s", type_name(eps));
        goto fail;
    }
    if (eps->n != d->config.endpoints) {
        e = bad(&c, eps, "expected %u endpoints (config.pcie_endpoints), "
                "found %zu", d->config.endpoints, eps->n);
        goto fail;
    }
    d->nendpoints = (unsigned)eps->n;
    d->endpoints = calloc(d->nendpoints + 1, sizeof(ptl_endpoint));
    if (!d->endpoints) {
        e = ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
        goto fail;
    }
    for (unsigned i = 0; i < d->nendpoints; i++) {
        size_t m = push(&c, "[%u]", i);

        e = read_endpoint(&c, &eps->items[i], i, &d->config,
                          &d->endpoints[i]);
        if (e) {
            goto fail;
        }
        pop(&c, m);
    }
    if (d->nendpoints) {
        const ptl_endpoint *ep = &d->endpoints[0];

        d->config.brake_reasons = ep->nbrakes;
        d->config.pcie_hists = ep->nhists;
        d->config.rq_regions = ep->buses[0].nregions;
        d->config.rc_regions = ep->buses[1].nregions;
        d->config.rq_bytes = ep->buses[0].region_bytes;
        d->config.rc_bytes = ep->buses[1].region_bytes;
        if (ep->nbuses > 2) {
            d->config.up_regions = ep->buses[2].nregions;
            d->config.down_regions = ep->buses[3].nregions;
            d->config.up_bytes = ep->buses[2].region_bytes;
            d->config.down_bytes = ep->buses[3].region_bytes;
        }
    }
    if ((e = read_port(&c, doc, &d->port))) {
        goto fail;
    }
    *out = d;
    return PTL_OK;
fail:
    ptl_data_free(d);
    return e;
}

/* ------------------------------------------------------------- stream */

struct ptl_input {
    FILE *f;
    char *buf;
    size_t len, cap;
    bool eof;
    unsigned line, col;         /* of buf[0] in the stream */
    unsigned count;
    /* the scan for the end of the document at the start of buf */
    size_t scan, depth;
    bool in_string, escape, started;
};

ptl_input *ptl_input_new(FILE *f)
{
    ptl_input *in = calloc(1, sizeof(*in));

    if (in) {
        in->f = f;
        in->line = 1;
        in->col = 1;
    }
    return in;
}

void ptl_input_free(ptl_input *in)
{
    if (in) {
        free(in->buf);
        free(in);
    }
}

unsigned ptl_input_count(const ptl_input *in)
{
    return in->count;
}

/* Drops buf[0..n), keeping line and column of the new start. */
static void consume(ptl_input *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (in->buf[i] == '\n') {
            in->line++;
            in->col = 1;
        } else {
            in->col++;
        }
    }
    memmove(in->buf, in->buf + n, in->len - n);
    in->len -= n;
    in->scan = 0;
    in->depth = 0;
    in->in_string = in->escape = in->started = false;
}

/*
 * Scans on from in->scan for the end of the value that starts the buffer;
 * true with *end when it is complete. Only counts brackets outside strings:
 * the parser judges the rest.
 */
static bool scan_end(ptl_input *in, size_t *end)
{
    for (; in->scan < in->len; in->scan++) {
        char ch = in->buf[in->scan];

        if (in->in_string) {
            if (in->escape) {
                in->escape = false;
            } else if (ch == '\\') {
                in->escape = true;
            } else if (ch == '"') {
                in->in_string = false;
            }
        } else if (ch == '"') {
            in->in_string = true;
        } else if (ch == '{' || ch == '[') {
            in->depth++;
            in->started = true;
        } else if (ch == '}' || ch == ']') {
            if (in->depth <= 1) {
                *end = ++in->scan;
                return true;
            }
            in->depth--;
        }
    }
    return false;
}

static ptl_err doc_error(ptl_input *in, ptl_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static ptl_err doc_error(ptl_input *in, ptl_error *err, const char *fmt, ...)
{
    char what[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return ptl_set_error(err, PTL_E_USAGE, "document %u: %s", in->count + 1,
                         what);
}

ptl_err ptl_input_next(ptl_input *in, ptl_data **d, double *seconds,
                       ptl_error *err)
{
    size_t skip = 0, end = 0;
    ptl_json *doc;
    ptl_error perr = { 0 };
    ptl_err e;
    bool complete = false;

    *d = NULL;
    for (;;) {
        /* leading whitespace */
        while (skip < in->len && strchr(" \t\r\n", in->buf[skip]) &&
               in->buf[skip] != '\0') {
            skip++;
        }
        if (skip) {
            consume(in, skip);
            skip = 0;
        }
        if (in->len > 0) {
            if (in->buf[0] != '{') {
                unsigned char ch = (unsigned char)in->buf[0];

                if (ch >= 0x20 && ch < 0x7F) {
                    return doc_error(in, err, "line %u, column %u: expected "
                                     "'{' (a document is a JSON object), "
                                     "found '%c'", in->line, in->col, ch);
                }
                return doc_error(in, err, "line %u, column %u: expected '{' "
                                 "(a document is a JSON object), found byte "
                                 "0x%02x", in->line, in->col, ch);
            }
            /* one read can bring a whole document above the limit */
            if (scan_end(in, &end) && end <= PTL_INPUT_MAX_DOCUMENT) {
                complete = true;
                break;
            }
            if (in->len > PTL_INPUT_MAX_DOCUMENT) {
                return doc_error(in, err, "line %u, column %u: longer than "
                                 "%u bytes", in->line, in->col,
                                 PTL_INPUT_MAX_DOCUMENT);
            }
        }
        if (in->eof) {
            if (in->len == 0) {
                return PTL_OK;  /* no more documents */
            }
            break;
        }
        if (in->cap - in->len < 65536) {
            size_t cap = in->cap ? in->cap * 2 : 131072;
            char *b = realloc(in->buf, cap);

            if (!b) {
                return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
            }
            in->buf = b;
            in->cap = cap;
        }
        {
            size_t got = fread(in->buf + in->len, 1, in->cap - in->len,
                               in->f);

            in->len += got;
            if (got == 0) {
                if (ferror(in->f)) {
                    return ptl_set_error(err, PTL_E_INTERNAL, "cannot read: "
                                         "%s", strerror(errno));
                }
                in->eof = true;
            }
        }
    }
    if (!complete) {
        end = in->len;
    }
    e = ptl_json_parse(in->buf, end, in->line, in->col, NULL, &doc, &perr);
    if (e != PTL_OK) {
        return e == PTL_E_USAGE ? doc_error(in, err, "%s", perr.msg)
                                : ptl_set_error(err, e, "%s", perr.msg);
    }
    e = ptl_data_from_json(doc, d, seconds, &perr);
    ptl_json_free(doc);
    if (e != PTL_OK) {
        return e == PTL_E_USAGE ? doc_error(in, err, "%s", perr.msg)
                                : ptl_set_error(err, e, "%s", perr.msg);
    }
    consume(in, end);
    in->count++;
    return PTL_OK;
}
