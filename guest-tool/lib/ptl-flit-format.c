/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What --list and --flit print of the flit mode of a card and the ports
 * above it (ptl-flit.c reads and decodes it): --list's line, --flit's
 * text report and its JSON document (pcie-telemetry(1) shows both).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pcie-telemetry.h"
#include "ptl-jw.h"

static int finish(FILE *f)
{
    return fflush(f) != 0 || ferror(f) ? -1 : 0;
}

static const char *role(const ptl_flit_dev *d)
{
    return d->card ? "card" : "port";
}

/* "supported, active", "not supported", ", Flit Mode Disable set" */
static void mode_text(FILE *f, const ptl_flit_mode *m)
{
    if (!m->pcie) {
        fputs("no PCI Express capability", f);
        return;
    }
    fprintf(f, "%s, %s", m->supported ? "supported" : "not supported",
            m->active ? "active" : "not active");
    if (m->disable) {
        fputs(", Flit Mode Disable set", f);
    }
}

int ptl_flit_format_list(FILE *f, const ptl_flit_dev *d, const char *indent)
{
    bool first = true;

    fprintf(f, "%sflit %s %s: ", indent, role(d), d->slot);
    mode_text(f, &d->mode);
    for (unsigned k = 0; k < PTL_FLIT_NCAPS; k++) {
        if (d->mode.cap[k]) {
            fprintf(f, "%s0x%04x at 0x%x", first ? "; " : ", ",
                    ptl_flit_cap_id(k), d->mode.cap[k]);
            first = false;
        }
    }
    if (first) {
        fputs("; no flit capability", f);
    }
    fputc('\n', f);
    return finish(f);
}

/* ---------------------------------------------------------------- text */

#define LABEL "    %-18s "

static const char *width_text(unsigned width, char *buf, size_t len)
{
    if (!width) {
        return "reserved width";
    }
    snprintf(buf, len, "x%u", width);
    return buf;
}

static const char *pm(bool b)
{
    return b ? "+" : "-";
}

static void text_64gt(FILE *f, const ptl_flit_dev *d)
{
    const ptl_flit_64gt *s = &d->pl64;

    fprintf(f, "  Physical Layer 64.0 GT/s at 0x%x\n",
            d->mode.cap[PTL_FLIT_CAP_64GT]);
    fprintf(f, LABEL "equalization complete%s phase1%s phase2%s phase3%s "
            "request%s (0x%08x)\n", "status", pm(s->eq_complete),
            pm(s->eq_phase1), pm(s->eq_phase2), pm(s->eq_phase3),
            pm(s->eq_request), s->status);
}

static void count16(FILE *f, uint32_t v, bool saturated)
{
    fprintf(f, "%u%s", v, saturated ? "+" : "");
}

static void text_log(FILE *f, const ptl_flit_dev *d)
{
    const ptl_flit_log_entry *e = &d->log;
    const ptl_flit_err_counter *c = &d->counter;
    const ptl_flit_fber_ctl *fc = &d->fber_found;
    const ptl_flit_fber *fb = &d->fber;
    char w[16];

    fprintf(f, "  Flit Logging at 0x%x\n", d->mode.cap[PTL_FLIT_CAP_LOG]);
    if (!e->valid) {
        fprintf(f, LABEL "empty (0x%08x)\n", "error log", e->log1);
    } else {
        /* consecutive: the flits in error after the logged one */
        fprintf(f, LABEL "valid, %s, offset %u%s%s, %u consecutive after "
                "it%s (0x%08x)\n", "error log",
                width_text(e->width, w, sizeof(w)), e->offset,
                e->unrecognized ? ", unrecognized flit" : "",
                e->uncorrectable ? ", FEC uncorrectable" : "",
                e->consecutive, e->more ? ", more entries" : "", e->log1);
        fprintf(f, LABEL "0x%04x (log 1), 0x%08x (log 2)\n", "syndromes",
                e->syndrome, e->log2);
    }
    fprintf(f, LABEL "%s, interrupt %s, counting %s, trigger %u "
            "(0x%04x)\n", "error counter", c->enabled ? "on" : "off",
            c->int_enable ? "on" : "off", ptl_flit_events_text(c->events),
            c->trigger, c->control);
    fprintf(f, LABEL "count %u, %s when started%s (0x%04x)\n",
            "counter status", c->count, width_text(c->width, w, sizeof(w)),
            c->interrupt ? ", interrupt generated" : "", c->status);
    fprintf(f, LABEL "%s as found, granularity %u (0x%08x)%s\n",
            "FBER measurement", fc->enabled ? "on" : "off",
            fc->granularity, fc->control, !fb->measured ? "" : fb->cleared ?
            ": enabled with Clear for the interval" :
            ": counted by difference, left on");
    if (!fb->measured) {
        return;
    }
    fprintf(f, LABEL "%llu in %.3f s, ", "flits received",
            (unsigned long long)fb->flits, fb->seconds);
    if (isnan(fb->flits_per_s)) {
        fputs("- flits/s\n", f);
    } else {
        fprintf(f, "%.0f flits/s\n", fb->flits_per_s);
    }
    fprintf(f, LABEL, "invalid flits");
    count16(f, fb->invalid, fb->invalid_saturated);
    fprintf(f, "\n" LABEL "lanes 0-%u:", "correctable", fb->nlanes - 1);
    for (unsigned i = 0; i < fb->nlanes; i++) {
        fputc(' ', f);
        count16(f, fb->lane[i], fb->lane_saturated[i]);
    }
    fputc('\n', f);
}

static void text_latency(FILE *f, const ptl_flit_latency *l)
{
    const ptl_flit_perf_status *s = &l->st;
    char inst[32];

    if (!l->measured) {
        fprintf(f, LABEL "not measured: %s (status %s, 0x%08x)\n",
                "Flit->Ack latency", l->skipped,
                ptl_flit_status_text(s->status), s->raw);
        return;
    }
    if (l->instances) {
        snprintf(inst, sizeof(inst), "%u instances", l->instances);
    } else {
        snprintf(inst, sizeof(inst), "worst case");
    }
    fprintf(f, LABEL "%s, %s", "Flit->Ack latency",
            ptl_flit_status_text(s->status), inst);
    if (s->status == PTL_FST_OVERFLOW) {
        fprintf(f, ": the counter passed 0xFFFF, the other fields are "
                "undefined (0x%08x)\n", s->raw);
        return;
    }
    if (s->status == PTL_FST_NOT_STARTED) {
        fprintf(f, " (0x%08x)\n", s->raw);
        return;
    }
    fprintf(f, ": %u flit%s tracked, counter %u (%.0f ns)", s->tracked,
            s->tracked == 1 ? "" : "s", s->counter, l->counter_ns);
    if (!isnan(l->average_ns)) {
        fprintf(f, ", average %.1f ns", l->average_ns);
    }
    if (!isnan(l->worst_ns)) {
        fprintf(f, ", worst %.0f ns", l->worst_ns);
    }
    fprintf(f, "%s\n", s->interrupt ? ", interrupt" : "");
}

static void text_perf(FILE *f, const ptl_flit_dev *d)
{
    const ptl_flit_perf *p = &d->perf;
    unsigned n = p->nltssm < PTL_FPERF_LTSSM_MAX ? p->nltssm
                                                 : PTL_FPERF_LTSSM_MAX;
    bool any = false;

    fprintf(f, "  Flit Performance Measurement at 0x%x: %u LTSSM "
            "register%s, interrupt vector %u\n",
            d->mode.cap[PTL_FLIT_CAP_PERF], p->nltssm,
            p->nltssm == 1 ? "" : "s", p->vector);
    if (p->latency.measured || p->latency.skipped[0]) {
        text_latency(f, &p->latency);
    }
    fprintf(f, LABEL, "trackers");
    for (unsigned k = 0; k < 5; k++) {
        if ((p->found.trackers >> k) & 1) {
            fprintf(f, "%s%s", any ? ", " : "", ptl_flit_tracker_name(k));
            any = true;
        }
    }
    fprintf(f, "%s (control 0x%08x as found)\n",
            any ? " enabled" : "none enabled", p->found.control);
    for (unsigned i = 0; i < n; i++) {
        const ptl_flit_perf_status *s = &p->ltssm[i];
        int k = ptl_flit_ltssm_tracker(p->found.trackers, i);
        char label[16];

        snprintf(label, sizeof(label), "LTSSM %u", i);
        fprintf(f, LABEL "%s%s%s, count %u, counter %u (%llu us)%s\n",
                label, k >= 0 ? ptl_flit_tracker_name(k) : "",
                k >= 0 ? ": " : "", ptl_flit_status_text(s->status),
                s->tracked, s->counter,
                (unsigned long long)s->counter * PTL_FLTSSM_UNIT_US,
                s->interrupt ? ", interrupt" : "");
    }
}

int ptl_flit_format_text(FILE *f, const ptl_flit_dev *devs, unsigned n,
                         double seconds)
{
    const char *card = n && devs[0].card ? devs[0].slot : "the card";
    int len;

    len = fprintf(f, "Flit mode of %s and the ports above it, over %.2f s\n",
                  card, seconds);
    for (int i = 0; i < len - 1; i++) {
        fputc('-', f);
    }
    fputc('\n', f);
    for (unsigned i = 0; i < n; i++) {
        const ptl_flit_dev *d = &devs[i];
        const char *speed = ptl_link_speed_text(d->link.speed);

        fprintf(f, "\n%s (%s): flit mode ", d->slot, role(d));
        mode_text(f, &d->mode);
        if (d->link.present) {
            fprintf(f, "; link %s x%u", speed ? speed : "unknown speed",
                    d->link.width);
        }
        fputc('\n', f);
        if (d->mode.cap[PTL_FLIT_CAP_64GT]) {
            text_64gt(f, d);
        }
        if (d->mode.cap[PTL_FLIT_CAP_LOG]) {
            text_log(f, d);
        }
        if (d->mode.cap[PTL_FLIT_CAP_PERF]) {
            text_perf(f, d);
        }
    }
    return finish(f);
}

/* ---------------------------------------------------------------- JSON */

/* A container as a member (key) or as an item of an array (NULL) */
static void jw_open_at(jw *w, const char *key, char c)
{
    if (key) {
        jw_key(w, key);
    } else {
        jw_item(w);
    }
    jw_open(w, c);
}

static void jw_str(jw *w, const char *key, const char *s)
{
    jw_key(w, key);
    if (s) {
        jw_string(w, s);
    } else {
        fputs("null", w->f);
    }
}

/* NAN is null: JSON has no NaN */
static void jw_num(jw *w, const char *key, double v)
{
    jw_key(w, key);
    if (isfinite(v)) {
        fprintf(w->f, "%.9g", v);
    } else {
        fputs("null", w->f);
    }
}

static void jw_null(jw *w, const char *key)
{
    jw_key(w, key);
    fputs("null", w->f);
}

static void jw_width(jw *w, const char *key, unsigned width)
{
    if (width) {
        jw_u64(w, key, width);
    } else {
        jw_null(w, key);
    }
}

static void json_status(jw *w, const ptl_flit_perf_status *s)
{
    jw_str(w, "status", ptl_flit_status_text(s->status));
    jw_u64(w, "tracked", s->tracked);
    jw_bool(w, "interrupt", s->interrupt);
    jw_u64(w, "counter", s->counter);
}

static void json_log(jw *w, const ptl_flit_dev *d)
{
    const ptl_flit_log_entry *e = &d->log;
    const ptl_flit_err_counter *c = &d->counter;
    const ptl_flit_fber *fb = &d->fber;

    jw_open_at(w, "log", '{');
    jw_u64(w, "offset", d->mode.cap[PTL_FLIT_CAP_LOG]);
    jw_open_at(w, "error_log", '{');
    jw_u64(w, "log1", e->log1);
    jw_u64(w, "log2", e->log2);
    jw_bool(w, "valid", e->valid);
    jw_width(w, "width", e->width);
    jw_u64(w, "offset", e->offset);
    jw_u64(w, "consecutive", e->consecutive);
    jw_bool(w, "more", e->more);
    jw_bool(w, "unrecognized", e->unrecognized);
    jw_bool(w, "uncorrectable", e->uncorrectable);
    jw_u64(w, "syndrome", e->syndrome);
    jw_close(w, '}');
    jw_open_at(w, "error_counter", '{');
    jw_u64(w, "control", c->control);
    jw_u64(w, "status", c->status);
    jw_bool(w, "enabled", c->enabled);
    jw_bool(w, "interrupt_enable", c->int_enable);
    jw_u64(w, "events", c->events);
    jw_u64(w, "trigger", c->trigger);
    jw_width(w, "width", c->width);
    jw_bool(w, "interrupt", c->interrupt);
    jw_u64(w, "count", c->count);
    jw_close(w, '}');
    jw_open_at(w, "fber", '{');
    jw_u64(w, "control", d->fber_found.control);
    jw_bool(w, "enabled", d->fber_found.enabled);
    jw_u64(w, "granularity", d->fber_found.granularity);
    if (fb->measured) {
        jw_bool(w, "cleared", fb->cleared);
        jw_num(w, "seconds", fb->seconds);
        jw_u64(w, "flits", fb->flits);
        jw_num(w, "flits_per_second", fb->flits_per_s);
        jw_u64(w, "invalid", fb->invalid);
        jw_bool(w, "invalid_saturated", fb->invalid_saturated);
        jw_open_at(w, "lanes", '[');
        for (unsigned i = 0; i < fb->nlanes; i++) {
            jw_item(w);
            fprintf(w->f, "%u", fb->lane[i]);
        }
        jw_close(w, ']');
        jw_open_at(w, "lanes_saturated", '[');
        for (unsigned i = 0; i < fb->nlanes; i++) {
            jw_item(w);
            fputs(fb->lane_saturated[i] ? "true" : "false", w->f);
        }
        jw_close(w, ']');
    }
    jw_close(w, '}');
    jw_close(w, '}');
}

static void json_perf(jw *w, const ptl_flit_dev *d)
{
    const ptl_flit_perf *p = &d->perf;
    const ptl_flit_latency *l = &p->latency;
    unsigned n = p->nltssm < PTL_FPERF_LTSSM_MAX ? p->nltssm
                                                 : PTL_FPERF_LTSSM_MAX;

    jw_open_at(w, "perf", '{');
    jw_u64(w, "offset", d->mode.cap[PTL_FLIT_CAP_PERF]);
    jw_u64(w, "ltssm_registers", p->nltssm);
    jw_u64(w, "interrupt_vector", p->vector);
    jw_u64(w, "control", p->found.control);
    jw_bool(w, "enabled", p->found.enabled);
    jw_open_at(w, "trackers", '[');
    for (unsigned k = 0; k < 5; k++) {
        if ((p->found.trackers >> k) & 1) {
            jw_item(w);
            fprintf(w->f, "\"%s\"", ptl_flit_tracker_name(k));
        }
    }
    jw_close(w, ']');
    if (l->measured) {
        jw_open_at(w, "latency", '{');
        jw_str(w, "type", "flit_ack");
        jw_u64(w, "instances", l->instances);
        json_status(w, &l->st);
        jw_num(w, "counter_ns", l->counter_ns);
        jw_num(w, "average_ns", l->average_ns);
        jw_num(w, "worst_ns", l->worst_ns);
        jw_close(w, '}');
    } else {
        jw_null(w, "latency");
    }
    jw_str(w, "latency_skipped", l->skipped[0] ? l->skipped : NULL);
    jw_open_at(w, "ltssm", '[');
    for (unsigned i = 0; i < n; i++) {
        int k = ptl_flit_ltssm_tracker(p->found.trackers, i);

        jw_open_at(w, NULL, '{');
        jw_u64(w, "register", i);
        jw_str(w, "tracker", k >= 0 ? ptl_flit_tracker_name(k) : NULL);
        json_status(w, &p->ltssm[i]);
        jw_u64(w, "counter_us",
                (unsigned long long)p->ltssm[i].counter * PTL_FLTSSM_UNIT_US);
        jw_close(w, '}');
    }
    jw_close(w, ']');
    jw_close(w, '}');
}

static void json_dev(jw *w, const ptl_flit_dev *d)
{
    jw_open_at(w, NULL, '{');
    jw_str(w, "device", d->slot);
    jw_str(w, "role", role(d));
    jw_bool(w, "flit_mode", d->mode.active);
    jw_bool(w, "flit_mode_supported", d->mode.supported);
    jw_bool(w, "flit_mode_disable", d->mode.disable);
    if (d->link.present) {
        jw_open_at(w, "link", '{');
        jw_str(w, "speed", ptl_link_speed_text(d->link.speed));
        jw_u64(w, "width", d->link.width);
        jw_close(w, '}');
    } else {
        jw_null(w, "link");
    }
    if (d->mode.cap[PTL_FLIT_CAP_64GT]) {
        const ptl_flit_64gt *s = &d->pl64;

        jw_open_at(w, "pl_64gt", '{');
        jw_u64(w, "offset", d->mode.cap[PTL_FLIT_CAP_64GT]);
        jw_u64(w, "status", s->status);
        jw_bool(w, "eq_complete", s->eq_complete);
        jw_bool(w, "eq_phase1", s->eq_phase1);
        jw_bool(w, "eq_phase2", s->eq_phase2);
        jw_bool(w, "eq_phase3", s->eq_phase3);
        jw_bool(w, "eq_request", s->eq_request);
        jw_close(w, '}');
    } else {
        jw_null(w, "pl_64gt");
    }
    if (d->mode.cap[PTL_FLIT_CAP_LOG]) {
        json_log(w, d);
    } else {
        jw_null(w, "log");
    }
    if (d->mode.cap[PTL_FLIT_CAP_PERF]) {
        json_perf(w, d);
    } else {
        jw_null(w, "perf");
    }
    jw_close(w, '}');
}

int ptl_flit_format_json(FILE *f, const ptl_flit_dev *devs, unsigned n,
                         double seconds)
{
    jw w = { .f = f };

    jw_open(&w, '{');
    jw_num(&w, "seconds", seconds);
    jw_open_at(&w, "flit", '[');
    for (unsigned i = 0; i < n; i++) {
        json_dev(&w, &devs[i]);
    }
    jw_close(&w, ']');
    jw_close(&w, '}');
    fputc('\n', f);
    return finish(f);
}
