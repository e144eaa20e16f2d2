/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HiSilicon PCIe Tune and Trace, the pure half: the hisi_ptt PMUs and
 * their filter files in sysfs, the filter that covers a card, the trace's
 * config through the PMU's format fields, the records decoded and summed,
 * and the report. The recording itself is in ptl-ptt-perf.c.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pcie-telemetry.h"
#include "ptl-sysfs.h"

/* ------------------------------------------------------------ sysfs */

/* A filter file's content: "0x80001" (hex, as the driver prints it). */
static bool read_filter(const char *path, uint32_t *value)
{
    char text[64], *end;
    unsigned long v;
    FILE *f = fopen(path, "re");
    size_t n;

    if (!f) {
        return false;
    }
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    while (n > 0 && isspace((unsigned char)text[n - 1])) {
        n--;
    }
    text[n] = '\0';
    errno = 0;
    v = strtoul(text, &end, 16);
    if (n == 0 || *end || errno || v > UINT32_MAX) {
        errno = EINVAL;
        return false;
    }
    *value = (uint32_t)v;
    return true;
}

static int cmp_filter(const void *a, const void *b)
{
    const ptl_ptt_filter *x = a, *y = b;

    if (x->requester != y->requester) {
        return x->requester ? 1 : -1;
    }
    return strcmp(x->name, y->name);
}

/* The BDF-named files of dir/sub into p's filters. */
static ptl_err load_filters(ptl_ptt_pmu *p, const char *sub, bool requester,
                            ptl_error *err)
{
    char dir[PATH_MAX + 32];
    DIR *d;
    struct dirent *de;

    snprintf(dir, sizeof(dir), "%s/%s", p->pmu.sysfs, sub);
    d = opendir(dir);
    if (!d) {
        /* a driver without filters: nothing a trace could be limited to */
        return PTL_OK;
    }
    while ((de = readdir(d))) {
        char path[PATH_MAX + 300];
        unsigned dom, bus, dev, fn;
        ptl_ptt_filter *f;

        if (!ptl_parse_bdf(de->d_name, &dom, &bus, &dev, &fn) ||
            p->nfilters == PTL_PTT_MAX_FILTERS) {
            continue;
        }
        f = &p->filters[p->nfilters];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (!read_filter(path, &f->value)) {
            int e = errno;

            closedir(d);
            return ptl_set_error(err, e == EACCES || e == EPERM ? PTL_E_PERM
                                 : PTL_E_PMU, "cannot read the filter %s: %s",
                                 path, e == EINVAL ? "not a hex number"
                                 : strerror(e));
        }
        snprintf(f->name, sizeof(f->name), "%.15s", de->d_name);
        f->requester = requester;
        p->nfilters++;
    }
    closedir(d);
    return PTL_OK;
}

ptl_err ptl_ptt_load(const char *dir, ptl_ptt_pmu *p, ptl_error *err)
{
    ptl_err rc;

    memset(p, 0, sizeof(*p));
    rc = ptl_pmu_load(dir, &p->pmu, err);
    if (rc == PTL_OK) {
        rc = load_filters(p, "root_port_filters", false, err);
    }
    if (rc == PTL_OK) {
        rc = load_filters(p, "requester_filters", true, err);
    }
    qsort(p->filters, p->nfilters, sizeof(p->filters[0]), cmp_filter);
    return rc;
}

static int cmp_pmu(const void *a, const void *b)
{
    const ptl_ptt_pmu *x = a, *y = b;

    return strcmp(x->pmu.name, y->pmu.name);
}

ptl_err ptl_ptt_list(ptl_ptt_pmu **pmus, unsigned *n, ptl_error *err)
{
    char dir[PATH_MAX];
    ptl_ptt_pmu *list = NULL;
    unsigned count = 0;
    DIR *d;
    struct dirent *de;

    *pmus = NULL;
    *n = 0;
    ptl_pmu_dir(dir, sizeof(dir));
    d = opendir(dir);
    if (!d) {
        return PTL_OK;          /* no perf in this kernel: no PMU at all */
    }
    while ((de = readdir(d))) {
        char path[PATH_MAX + 300];
        ptl_ptt_pmu *grown;
        ptl_err rc;

        if (strncmp(de->d_name, PTL_PTT_PREFIX, strlen(PTL_PTT_PREFIX))) {
            continue;
        }
        grown = realloc(list, (count + 1) * sizeof(*list));
        if (!grown) {
            free(list);
            closedir(d);
            return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
        }
        list = grown;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        rc = ptl_ptt_load(path, &list[count], err);
        if (rc != PTL_OK) {
            free(list);
            closedir(d);
            return rc;
        }
        count++;
    }
    closedir(d);
    if (count) {
        qsort(list, count, sizeof(*list), cmp_pmu);
    }
    *pmus = list;
    *n = count;
    return PTL_OK;
}

const ptl_ptt_filter *ptl_ptt_filter_find(const ptl_ptt_pmu *p,
                                          const char *name, bool requester)
{
    for (unsigned i = 0; i < p->nfilters; i++) {
        if (p->filters[i].requester == requester &&
            !strcmp(p->filters[i].name, name)) {
            return &p->filters[i];
        }
    }
    return NULL;
}

ptl_err ptl_ptt_find(const char *card, ptl_ptt_target *t, ptl_error *err)
{
    ptl_pci_path path;
    ptl_ptt_pmu *pmus;
    unsigned n;
    char dir[PATH_MAX];
    ptl_err rc;

    memset(t, 0, sizeof(*t));
    rc = ptl_pci_path_get(card, &path, err);
    if (rc != PTL_OK) {
        return rc;
    }
    snprintf(t->card, sizeof(t->card), "%s", path.slot[0]);
    rc = ptl_ptt_list(&pmus, &n, err);
    if (rc != PTL_OK) {
        return rc;
    }
    /* the requester filter takes the card's TLPs only: the best fit */
    for (unsigned i = 0; i < n; i++) {
        const ptl_ptt_filter *f = ptl_ptt_filter_find(&pmus[i], t->card,
                                                      true);

        if (f) {
            t->filter = *f;
            t->pmu = pmus[i];
            free(pmus);
            return PTL_OK;
        }
    }
    /* else every TLP through a root port above it, nearest first */
    for (unsigned k = 1; k < path.n; k++) {
        for (unsigned i = 0; i < n; i++) {
            const ptl_ptt_filter *f = ptl_ptt_filter_find(&pmus[i],
                                                          path.slot[k],
                                                          false);

            if (f) {
                t->filter = *f;
                t->pmu = pmus[i];
                free(pmus);
                return PTL_OK;
            }
        }
    }
    free(pmus);
    ptl_pmu_dir(dir, sizeof(dir));
    if (!n) {
        return ptl_set_error(err, PTL_E_NO_PTT, "no hisi_ptt PMU covers %s "
                             "(there is no hisi_ptt* PMU in %s: is hisi_ptt "
                             "loaded?)", t->card, dir);
    }
    return ptl_set_error(err, PTL_E_NO_PTT, "no hisi_ptt PMU covers %s (no "
                         "requester filter %s%s%s and no root port filter "
                         "above it in %s/hisi_ptt*)", t->card, t->card,
                         path.n > 1 ? ", no root port filter of " : "",
                         path.n > 1 ? path.slot[path.n - 1] : "", dir);
}

/* ----------------------------------------------------------- config */

unsigned ptl_ptt_direction_code(ptl_ptt_dir dir, ptl_ptt_format format)
{
    if (format == PTL_PTT_8DW) {
        return dir == PTL_PTT_OUT ? 1 : 2;
    }
    return dir == PTL_PTT_OUT ? 1 : 0;
}

ptl_err ptl_ptt_encode(const ptl_pmu *pmu, uint32_t filter,
                       unsigned direction, unsigned type,
                       ptl_ptt_format format,
                       uint64_t config[PTL_PMU_CONFIG_WORDS],
                       ptl_error *err)
{
    char terms[128];

    /* through the format files: the field positions are the driver's */
    memset(config, 0, PTL_PMU_CONFIG_WORDS * sizeof(config[0]));
    snprintf(terms, sizeof(terms), "filter=0x%x,direction=%u,type=%u,"
             "format=%u", filter, direction, type,
             format == PTL_PTT_8DW ? 1 : 0);
    return ptl_pmu_encode(pmu, terms, false, config, err);
}

/* ----------------------------------------------------------- records */

static const char *const kind_names[PTL_TLP_NKINDS] = {
    [PTL_TLP_MRD] = "MRd", [PTL_TLP_MRDLK] = "MRdLk", [PTL_TLP_MWR] = "MWr",
    [PTL_TLP_IORD] = "IORd", [PTL_TLP_IOWR] = "IOWr",
    [PTL_TLP_CFGRD] = "CfgRd", [PTL_TLP_CFGWR] = "CfgWr",
    [PTL_TLP_MSG] = "Msg", [PTL_TLP_MSGD] = "MsgD",
    [PTL_TLP_CPL] = "Cpl", [PTL_TLP_CPLD] = "CplD",
    [PTL_TLP_CPLLK] = "CplLk", [PTL_TLP_CPLDLK] = "CplDLk",
    [PTL_TLP_ATOMIC] = "AtomicOp", [PTL_TLP_OTHER] = "other",
};

const char *ptl_tlp_kind_name(ptl_tlp_kind k)
{
    return (unsigned)k < PTL_TLP_NKINDS ? kind_names[k] : "other";
}

ptl_tlp_kind ptl_tlp_kind_of(unsigned fmt, unsigned type)
{
    bool data = fmt & 2;

    if (fmt & 4) {
        return PTL_TLP_OTHER;   /* a TLP prefix, not a header */
    }
    if ((type & 0x18) == 0x10) {
        return data ? PTL_TLP_MSGD : PTL_TLP_MSG;   /* 10rrr: routing */
    }
    switch (type) {
    case 0x00:
        return data ? PTL_TLP_MWR : PTL_TLP_MRD;
    case 0x01:
        return data ? PTL_TLP_OTHER : PTL_TLP_MRDLK;
    case 0x02:
        return data ? PTL_TLP_IOWR : PTL_TLP_IORD;
    case 0x04:
    case 0x05:
        return data ? PTL_TLP_CFGWR : PTL_TLP_CFGRD;
    case 0x0A:
        return data ? PTL_TLP_CPLD : PTL_TLP_CPL;
    case 0x0B:
        return data ? PTL_TLP_CPLDLK : PTL_TLP_CPLLK;
    case 0x0C:
    case 0x0D:
    case 0x0E:
        return data ? PTL_TLP_ATOMIC : PTL_TLP_OTHER;
    default:
        return PTL_TLP_OTHER;
    }
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

size_t ptl_ptt_record_size(ptl_ptt_format format)
{
    return format == PTL_PTT_8DW ? 32 : 16;
}

ptl_ptt_format ptl_ptt_guess_format(const uint8_t *p, size_t len)
{
    /*
     * As perf tells them apart; a 4DW DW0 with Length 1023 and time 2047
     * looks the same, so a trace whose format is known is not guessed
     */
    if (len >= 4 && (le32(p) & PTL_PTT_8DW_MARK) == PTL_PTT_8DW_MARK) {
        return PTL_PTT_8DW;
    }
    return PTL_PTT_4DW;
}

void ptl_ptt_decode(const uint8_t *p, ptl_ptt_format format,
                    ptl_ptt_record *r)
{
    uint32_t h0;

    memset(r, 0, sizeof(*r));
    r->format = format;
    if (format == PTL_PTT_8DW) {
        r->valid = (le32(p) & PTL_PTT_8DW_MARK) == PTL_PTT_8DW_MARK;
        r->prefix = le32(p + 4);
        for (int i = 0; i < 4; i++) {
            r->header[i] = le32(p + 8 + 4 * i);
        }
        r->time = le32(p + 28);
        h0 = r->header[0];
        r->fmt = h0 >> 29;
        r->type = (h0 >> 24) & 0x1F;
        r->t9 = (h0 >> 23) & 1;
        r->t8 = (h0 >> 19) & 1;
        r->th = (h0 >> 16) & 1;
        r->so = !((h0 >> 13) & 1);
        r->length = h0 & 0x3FF;
    } else {
        uint32_t d0 = le32(p);

        r->valid = true;
        r->fmt = d0 & 3;
        r->type = (d0 >> 2) & 0x1F;
        r->t9 = (d0 >> 7) & 1;
        r->t8 = (d0 >> 8) & 1;
        r->th = (d0 >> 9) & 1;
        r->so = (d0 >> 10) & 1;
        r->length = (d0 >> 11) & 0x3FF;
        r->time = d0 >> 21;
        /* the header's DW0 as far as the record keeps it */
        r->header[0] = (uint32_t)r->fmt << 29 | (uint32_t)r->type << 24 |
                       (uint32_t)r->t9 << 23 | (uint32_t)r->t8 << 19 |
                       (uint32_t)r->th << 16 | (uint32_t)!r->so << 13 |
                       r->length;
        for (int i = 1; i < 4; i++) {
            r->header[i] = le32(p + 4 * i);
        }
    }
    r->kind = ptl_tlp_kind_of(r->fmt, r->type);
    r->has_data = !(r->fmt & 4) && (r->fmt & 2);
    r->payload_dw = r->has_data ? (r->length ? r->length : 1024) : 0;
    switch (r->kind) {
    case PTL_TLP_CPL:
    case PTL_TLP_CPLD:
    case PTL_TLP_CPLLK:
    case PTL_TLP_CPLDLK:
        /* a completion names its completer first, then the requester */
        r->completer = (uint16_t)(r->header[1] >> 16);
        r->requester = (uint16_t)(r->header[2] >> 16);
        break;
    default:
        r->requester = (uint16_t)(r->header[1] >> 16);
        break;
    }
}

/* -------------------------------------------------------------- sums */

void ptl_ptt_sums_init(ptl_ptt_sums *s, ptl_ptt_format format,
                       ptl_ptt_dir dir)
{
    memset(s, 0, sizeof(*s));
    s->format = format;
    s->dir = dir;
}

static bool is_read_request(ptl_tlp_kind k)
{
    return k == PTL_TLP_MRD || k == PTL_TLP_MRDLK || k == PTL_TLP_IORD ||
           k == PTL_TLP_CFGRD;
}

void ptl_ptt_sums_add(ptl_ptt_sums *s, const ptl_ptt_record *r)
{
    uint64_t payload = (uint64_t)r->payload_dw * 4;
    uint64_t requested = 0;
    ptl_ptt_kind_sum *k;
    ptl_ptt_requester_sum *q = NULL;

    s->records++;
    if (!r->valid) {
        s->invalid++;
        return;
    }
    if (s->format == PTL_PTT_8DW) {
        /* the span of the trace's own clock; it wraps every 4.29 s */
        if (!s->timed) {
            s->timed = true;
            s->time_first = s->time_last = r->time;
        } else {
            s->time_last += (uint32_t)(r->time - s->time_raw);
        }
        s->time_raw = r->time;
    }
    if (is_read_request(r->kind)) {
        requested = (uint64_t)(r->length ? r->length : 1024) * 4;
    }
    k = &s->kinds[r->kind];
    k->tlps++;
    k->payload_bytes += payload;
    k->requested_bytes += requested;
    s->total.tlps++;
    s->total.payload_bytes += payload;
    s->total.requested_bytes += requested;
    for (unsigned i = 0; i < s->nrequesters && !q; i++) {
        if (s->requesters[i].id == r->requester) {
            q = &s->requesters[i];
        }
    }
    if (!q && s->nrequesters < PTL_PTT_MAX_REQUESTERS) {
        q = &s->requesters[s->nrequesters++];
        q->id = r->requester;
    }
    if (!q) {
        q = &s->other_requesters;
    }
    q->tlps++;
    q->payload_bytes += payload;
}

void ptl_ptt_sums_feed(ptl_ptt_sums *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    size_t size = ptl_ptt_record_size(s->format);
    ptl_ptt_record r;

    s->bytes += len;
    /* first complete the record the last piece left unfinished */
    if (s->tail) {
        size_t take = size - s->tail < len ? size - s->tail : len;

        memcpy(s->carry + s->tail, p, take);
        s->tail += take;
        p += take;
        len -= take;
        if (s->tail < size) {
            return;
        }
        ptl_ptt_decode(s->carry, s->format, &r);
        ptl_ptt_sums_add(s, &r);
        s->tail = 0;
    }
    for (; len >= size; p += size, len -= size) {
        ptl_ptt_decode(p, s->format, &r);
        ptl_ptt_sums_add(s, &r);
    }
    memcpy(s->carry, p, len);
    s->tail = len;
}

/* ------------------------------------------------------------ output */

static void requester_text(uint16_t id, char *buf, size_t len)
{
    snprintf(buf, len, "%02x:%02x.%x", id >> 8, (id >> 3) & 0x1F, id & 7);
}

static const char *dir_text(ptl_ptt_dir d)
{
    return d == PTL_PTT_OUT ? "out" : "in";
}

int ptl_ptt_format_text(FILE *f, const ptl_ptt_sums *s,
                        const ptl_ptt_info *info)
{
    char title[400], id[16];
    size_t tlen;

    if (info->pmu) {
        snprintf(title, sizeof(title), "PTT trace %s of %s, %s filter %s "
                 "(0x%05x)", info->pmu, info->card ? info->card : "?",
                 info->filter && info->filter->requester ? "requester"
                                                         : "root port",
                 info->filter ? info->filter->name : "?",
                 info->filter ? info->filter->value : 0);
    } else {
        snprintf(title, sizeof(title), "PTT trace (saved)");
    }
    tlen = strlen(title);
    fprintf(f, "%s\n", title);
    for (size_t i = 0; i < tlen; i++) {
        fputc('-', f);
    }
    fputc('\n', f);
    fprintf(f, "Direction %s (%s the root port), %s records: %llu records, "
            "%llu bytes", dir_text(s->dir),
            s->dir == PTL_PTT_OUT ? "out of" : "into",
            s->format == PTL_PTT_8DW ? "8DW" : "4DW",
            (unsigned long long)s->records, (unsigned long long)s->bytes);
    if (info->seconds > 0) {
        fprintf(f, " in %.2f s", info->seconds);
    }
    fputc('\n', f);
    if (s->invalid || s->tail || info->truncated || info->partial) {
        fprintf(f, "Warning: %llu records without the 8DW mark, %llu bytes "
                "of an incomplete record, %llu AUX chunks truncated (trace "
                "data lost), %llu partial\n",
                (unsigned long long)s->invalid,
                (unsigned long long)s->tail,
                (unsigned long long)info->truncated,
                (unsigned long long)info->partial);
    }
    fprintf(f, "\n%-10s  %12s  %16s  %16s\n", "TLP", "TLPs",
            "Payload bytes", "Requested bytes");
    fprintf(f, "%-10s  %12s  %16s  %16s\n", "----------", "------------",
            "----------------", "----------------");
    for (unsigned k = 0; k < PTL_TLP_NKINDS; k++) {
        const ptl_ptt_kind_sum *ks = &s->kinds[k];

        if (!ks->tlps) {
            continue;
        }
        fprintf(f, "%-10s  %12llu  %16llu  %16llu\n", kind_names[k],
                (unsigned long long)ks->tlps,
                (unsigned long long)ks->payload_bytes,
                (unsigned long long)ks->requested_bytes);
    }
    fprintf(f, "%-10s  %12llu  %16llu  %16llu\n", "total",
            (unsigned long long)s->total.tlps,
            (unsigned long long)s->total.payload_bytes,
            (unsigned long long)s->total.requested_bytes);
    if (s->nrequesters) {
        fprintf(f, "\n%-10s  %12s  %16s\n", "Requester", "TLPs",
                "Payload bytes");
        fprintf(f, "%-10s  %12s  %16s\n", "----------", "------------",
                "----------------");
        for (unsigned i = 0; i < s->nrequesters; i++) {
            requester_text(s->requesters[i].id, id, sizeof(id));
            fprintf(f, "%-10s  %12llu  %16llu\n", id,
                    (unsigned long long)s->requesters[i].tlps,
                    (unsigned long long)s->requesters[i].payload_bytes);
        }
        if (s->other_requesters.tlps) {
            fprintf(f, "%-10s  %12llu  %16llu\n", "others",
                    (unsigned long long)s->other_requesters.tlps,
                    (unsigned long long)s->other_requesters.payload_bytes);
        }
    }
    return ferror(f) ? -1 : 0;
}

/* A JSON string of a name we made or sysfs gave (no escapes needed). */
static void json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            fputc('\\', f);
        }
        if ((unsigned char)*s < 0x20) {
            fprintf(f, "\\u%04x", (unsigned char)*s);
        } else {
            fputc(*s, f);
        }
    }
    fputc('"', f);
}

static void json_sum(FILE *f, const char *indent, const char *label,
                     const ptl_ptt_kind_sum *k)
{
    fprintf(f, "%s{\n%s    \"kind\": \"%s\",\n%s    \"tlps\": %llu,\n"
            "%s    \"payload_bytes\": %llu,\n%s    \"requested_bytes\": "
            "%llu\n%s}", indent, indent, label, indent,
            (unsigned long long)k->tlps, indent,
            (unsigned long long)k->payload_bytes, indent,
            (unsigned long long)k->requested_bytes, indent);
}

int ptl_ptt_format_json(FILE *f, const ptl_ptt_sums *s,
                        const ptl_ptt_info *info)
{
    const char *in = "            ";
    bool first = true;
    char id[16], span[32] = "null";

    if (s->timed) {
        snprintf(span, sizeof(span), "%llu",
                 (unsigned long long)(s->time_last - s->time_first));
    }
    fputs("{\n    \"seconds\": ", f);
    if (info->seconds > 0) {
        fprintf(f, "%.6f", info->seconds);
    } else {
        fputs("null", f);
    }
    fputs(",\n    \"ptt\": {\n        \"pmu\": ", f);
    json_str(f, info->pmu);
    fputs(",\n        \"card\": ", f);
    json_str(f, info->card);
    fputs(",\n        \"filter\": ", f);
    if (info->filter) {
        fputs("{\n            \"kind\": ", f);
        json_str(f, info->filter->requester ? "requester" : "root_port");
        fputs(",\n            \"name\": ", f);
        json_str(f, info->filter->name);
        fprintf(f, ",\n            \"value\": %u\n        }",
                info->filter->value);
    } else {
        fputs("null", f);
    }
    fprintf(f, ",\n        \"direction\": \"%s\",\n        \"format\": "
            "\"%s\",\n        \"records\": %llu,\n        \"bytes\": %llu,\n"
            "        \"invalid_records\": %llu,\n        \"incomplete_bytes\""
            ": %llu,\n        \"truncated\": %llu,\n        \"partial\": "
            "%llu,\n        \"time_span_ns\": %s,\n        \"kinds\": [",
            dir_text(s->dir),
            s->format == PTL_PTT_8DW ? "8dw" : "4dw",
            (unsigned long long)s->records, (unsigned long long)s->bytes,
            (unsigned long long)s->invalid, (unsigned long long)s->tail,
            (unsigned long long)info->truncated,
            (unsigned long long)info->partial, span);
    for (unsigned k = 0; k < PTL_TLP_NKINDS; k++) {
        if (!s->kinds[k].tlps) {
            continue;
        }
        fputs(first ? "\n" : ",\n", f);
        json_sum(f, in, kind_names[k], &s->kinds[k]);
        first = false;
    }
    fputs(first ? "]" : "\n        ]", f);
    fputs(",\n        \"total\": {\n", f);
    fprintf(f, "            \"tlps\": %llu,\n            \"payload_bytes\": "
            "%llu,\n            \"requested_bytes\": %llu\n        },\n"
            "        \"requesters\": [",
            (unsigned long long)s->total.tlps,
            (unsigned long long)s->total.payload_bytes,
            (unsigned long long)s->total.requested_bytes);
    for (unsigned i = 0; i <= s->nrequesters; i++) {
        const ptl_ptt_requester_sum *q = i < s->nrequesters
                                         ? &s->requesters[i]
                                         : &s->other_requesters;

        if (i == s->nrequesters && !q->tlps) {
            break;
        }
        if (i < s->nrequesters) {
            requester_text(q->id, id, sizeof(id));
        } else {
            snprintf(id, sizeof(id), "others");
        }
        fprintf(f, "%s%s{\n%s    \"id\": \"%s\",\n%s    \"tlps\": %llu,\n"
                "%s    \"payload_bytes\": %llu\n%s}", i ? ",\n" : "\n", in,
                in, id, in, (unsigned long long)q->tlps, in,
                (unsigned long long)q->payload_bytes, in);
    }
    fputs(s->nrequesters ? "\n        ]\n    }\n}\n" : "]\n    }\n}\n", f);
    return ferror(f) ? -1 : 0;
}
