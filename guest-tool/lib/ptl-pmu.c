/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf PMUs as sysfs describes them (/sys/bus/event_source/devices/<pmu>:
 * type, cpumask, format/<field>, events/<alias>), events encoded through
 * their format fields, and one counting event opened with perf_event_open.
 * Nothing about a particular PMU is built in.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "pcie-telemetry.h"

#define SYSFS_ENV       "PCIE_TELEMETRY_SYSFS"
#define SYSFS_PCI       "/sys/bus/pci"
#define PARANOID_FILE   "/proc/sys/kernel/perf_event_paranoid"
/* what a sysfs attribute of a PMU can hold that we read */
#define ATTR_MAX        4096

static const char *const word_names[PTL_PMU_CONFIG_WORDS] = {
    "config", "config1", "config2", "config3",
};

void ptl_pmu_dir(char *buf, size_t len)
{
    const char *pci = getenv(SYSFS_ENV);
    const char *slash;
    size_t n;

    if (!pci || !*pci) {
        pci = SYSFS_PCI;
    }
    /* /sys/bus/pci -> /sys/bus/event_source/devices */
    n = strlen(pci);
    while (n > 1 && pci[n - 1] == '/') {
        n--;
    }
    slash = memrchr(pci, '/', n);
    n = slash ? (size_t)(slash - pci) : 0;
    snprintf(buf, len, "%.*s%sevent_source/devices", (int)n, pci,
             slash ? "/" : "");
}

/*
 * The whole of a small file, trailing white space cut. false with errno
 * when it cannot be read (EFBIG when too long).
 */
static bool read_attr(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    size_t n;

    if (!f) {
        return false;
    }
    n = fread(buf, 1, len, f);
    if (ferror(f)) {
        int e = errno;

        fclose(f);
        errno = e ? e : EIO;
        return false;
    }
    fclose(f);
    if (n == len) {
        errno = EFBIG;
        return false;
    }
    while (n > 0 && isspace((unsigned char)buf[n - 1])) {
        n--;
    }
    buf[n] = '\0';
    return true;
}

/* A sysfs attribute that could not be read: the error for it. */
static ptl_err attr_error(const char *path, ptl_error *err)
{
    int e = errno;

    return ptl_set_error(err, e == EACCES || e == EPERM ? PTL_E_PERM
                                                        : PTL_E_PMU,
                         "cannot read %s: %s", path, strerror(e));
}

/* Whole-string unsigned number: decimal, or hex after 0x (as perf). */
static bool parse_number(const char *s, size_t len, uint64_t *v)
{
    char buf[32];
    char *end;
    int base = 10;

    if (len == 0 || len >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (len > 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) {
        base = 16;
    }
    for (size_t i = base == 16 ? 2 : 0; i < len; i++) {
        if (base == 16 ? !isxdigit((unsigned char)buf[i])
                       : !isdigit((unsigned char)buf[i])) {
            return false;
        }
    }
    errno = 0;
    *v = strtoull(buf, &end, base);
    return errno == 0 && *end == '\0';
}

ptl_err ptl_pmu_format_parse(const char *name, const char *text,
                             ptl_pmu_format *f, ptl_error *err)
{
    const char *colon = strchr(text, ':');
    const char *p;
    size_t wlen;

    memset(f, 0, sizeof(*f));
    snprintf(f->name, sizeof(f->name), "%s", name);
    if (!colon) {
        return ptl_set_error(err, PTL_E_PMU, "format %s: '%s' is not "
                             "WORD:BITS", name, text);
    }
    wlen = (size_t)(colon - text);
    f->word = PTL_PMU_CONFIG_WORDS;
    for (unsigned w = 0; w < PTL_PMU_CONFIG_WORDS; w++) {
        if (wlen == strlen(word_names[w]) &&
            !strncmp(text, word_names[w], wlen)) {
            f->word = w;
        }
    }
    if (f->word == PTL_PMU_CONFIG_WORDS) {
        return ptl_set_error(err, PTL_E_PMU, "format %s: '%s' puts it in "
                             "'%.*s', not config, config1, config2 or "
                             "config3", name, text, (int)wlen, text);
    }
    /* a comma-separated list of bits and ranges lo-hi */
    p = colon + 1;
    for (;;) {
        const char *e = p + strcspn(p, ",");
        const char *dash = memchr(p, '-', (size_t)(e - p));
        uint64_t lo, hi;

        if (dash ? !parse_number(p, (size_t)(dash - p), &lo) ||
                   !parse_number(dash + 1, (size_t)(e - dash - 1), &hi)
                 : !parse_number(p, (size_t)(e - p), &lo)) {
            return ptl_set_error(err, PTL_E_PMU, "format %s: '%s' has a "
                                 "bit range that is not N or N-M", name,
                                 text);
        }
        if (!dash) {
            hi = lo;
        }
        if (lo > hi || hi > 63) {
            return ptl_set_error(err, PTL_E_PMU, "format %s: '%s' has bits "
                                 "out of 0 to 63 or out of order", name,
                                 text);
        }
        for (uint64_t b = lo; b <= hi; b++) {
            f->mask |= 1ull << b;
        }
        if (!*e) {
            break;
        }
        p = e + 1;
    }
    return PTL_OK;
}

static int cmp_format(const void *a, const void *b)
{
    const ptl_pmu_format *x = a, *y = b;

    return strcmp(x->name, y->name);
}

/* The first CPU of a cpumask list ("0", "0-3", "2,5-7"); -1 for none. */
static int first_cpu(const char *list)
{
    size_t n = strspn(list, "0123456789");
    uint64_t v;

    if (!parse_number(list, n, &v) || v > INT_MAX) {
        return -1;
    }
    return (int)v;
}

ptl_err ptl_pmu_load(const char *dir, ptl_pmu *pmu, ptl_error *err)
{
    char path[PATH_MAX + 64], text[ATTR_MAX];
    const char *base;
    size_t n = strlen(dir);
    uint64_t type;
    DIR *d;
    struct dirent *de;
    ptl_error e = { 0 };

    memset(pmu, 0, sizeof(*pmu));
    while (n > 1 && dir[n - 1] == '/') {
        n--;
    }
    if (n >= sizeof(pmu->sysfs)) {
        return ptl_set_error(err, PTL_E_PMU, "PMU path too long: %s", dir);
    }
    memcpy(pmu->sysfs, dir, n);
    pmu->sysfs[n] = '\0';
    base = strrchr(pmu->sysfs, '/');
    snprintf(pmu->name, sizeof(pmu->name), "%s", base ? base + 1 : dir);

    snprintf(path, sizeof(path), "%s/type", pmu->sysfs);
    if (!read_attr(path, text, sizeof(text))) {
        return attr_error(path, err);
    }
    if (!parse_number(text, strlen(text), &type) || type > UINT32_MAX) {
        return ptl_set_error(err, PTL_E_PMU, "%s: '%s' is not a PMU type",
                             path, text);
    }
    pmu->type = (uint32_t)type;

    /* uncore PMUs name the one CPU that counts for them */
    snprintf(path, sizeof(path), "%s/cpumask", pmu->sysfs);
    if (read_attr(path, text, sizeof(text))) {
        pmu->cpu = first_cpu(text);
        pmu->has_cpumask = pmu->cpu >= 0;
        if (pmu->cpu < 0) {
            if (text[0]) {
                return ptl_set_error(err, PTL_E_PMU, "%s: '%s' is not a "
                                     "CPU list", path, text);
            }
            pmu->cpu = 0;       /* empty: no CPU chosen yet */
        }
    } else if (errno != ENOENT) {
        return attr_error(path, err);
    }

    snprintf(path, sizeof(path), "%s/format", pmu->sysfs);
    d = opendir(path);
    if (!d) {
        if (errno == ENOENT) {
            return PTL_OK;      /* only config= terms then */
        }
        return attr_error(path, err);
    }
    while ((de = readdir(d))) {
        char fpath[PATH_MAX + 320];
        ptl_pmu_format *f;
        ptl_err rc;

        if (de->d_name[0] == '.') {
            continue;
        }
        if (pmu->nformats == PTL_PMU_MAX_FORMATS) {
            closedir(d);
            return ptl_set_error(err, PTL_E_PMU, "%s: more than %d format "
                                 "fields", path, PTL_PMU_MAX_FORMATS);
        }
        if (strlen(de->d_name) >= sizeof(f->name)) {
            closedir(d);
            return ptl_set_error(err, PTL_E_PMU, "%s: format field name "
                                 "too long: %s", path, de->d_name);
        }
        snprintf(fpath, sizeof(fpath), "%s/%s", path, de->d_name);
        if (!read_attr(fpath, text, sizeof(text))) {
            closedir(d);
            return attr_error(fpath, err);
        }
        f = &pmu->formats[pmu->nformats];
        rc = ptl_pmu_format_parse(de->d_name, text, f, &e);
        if (rc != PTL_OK) {
            closedir(d);
            return ptl_set_error(err, rc, "%s: %s", pmu->name, e.msg);
        }
        pmu->nformats++;
    }
    closedir(d);
    qsort(pmu->formats, pmu->nformats, sizeof(pmu->formats[0]), cmp_format);
    return PTL_OK;
}

static const ptl_pmu_format *find_format(const ptl_pmu *pmu, const char *key,
                                         size_t len)
{
    for (unsigned i = 0; i < pmu->nformats; i++) {
        if (strlen(pmu->formats[i].name) == len &&
            !strncmp(pmu->formats[i].name, key, len)) {
            return &pmu->formats[i];
        }
    }
    return NULL;
}

static int word_index(const char *key, size_t len)
{
    for (int w = 0; w < PTL_PMU_CONFIG_WORDS; w++) {
        if (strlen(word_names[w]) == len && !strncmp(word_names[w], key, len)) {
            return w;
        }
    }
    return -1;
}

/* The PMU's format fields as "a, b, c" for messages. */
static void format_names(const ptl_pmu *pmu, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (unsigned i = 0; i < pmu->nformats && used < len; i++) {
        int k = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                         pmu->formats[i].name);

        used += k > 0 ? (size_t)k : 0;
    }
    if (!pmu->nformats) {
        snprintf(buf, len, "none");
    }
}

/* value spread over the mask's bits, lowest first; false if it does not fit */
static bool deposit(uint64_t mask, uint64_t value, uint64_t *out)
{
    uint64_t r = 0;

    for (unsigned b = 0; b < 64; b++) {
        if (mask & (1ull << b)) {
            if (value & 1) {
                r |= 1ull << b;
            }
            value >>= 1;
        }
    }
    *out = r;
    return value == 0;
}

/* One "key[=value]" term of terms, [p, e). */
static ptl_err encode_term(const ptl_pmu *pmu, const char *p, const char *e,
                           bool allow_unset, uint64_t *config,
                           ptl_error *err)
{
    const char *eq = memchr(p, '=', (size_t)(e - p));
    size_t klen = eq ? (size_t)(eq - p) : (size_t)(e - p);
    const ptl_pmu_format *f;
    uint64_t value = 1, bits;
    int w;

    if (klen == 0) {
        return ptl_set_error(err, PTL_E_PMU, "%s: empty term in '%.*s'",
                             pmu->name, (int)(e - p), p);
    }
    if (eq && e - eq == 2 && eq[1] == '?') {
        if (allow_unset) {
            return PTL_OK;
        }
        return ptl_set_error(err, PTL_E_PMU, "%s: %.*s=? must be given a "
                             "value (%.*s=N)", pmu->name, (int)klen, p,
                             (int)klen, p);
    }
    if (eq && !parse_number(eq + 1, (size_t)(e - eq - 1), &value)) {
        return ptl_set_error(err, PTL_E_PMU, "%s: '%.*s' is not a number "
                             "(decimal or 0x hex) in %.*s", pmu->name,
                             (int)(e - eq - 1), eq + 1, (int)(e - p), p);
    }
    w = word_index(p, klen);
    if (w >= 0) {
        config[w] = value;
        return PTL_OK;
    }
    f = find_format(pmu, p, klen);
    if (!f) {
        char names[512];

        format_names(pmu, names, sizeof(names));
        return ptl_set_error(err, PTL_E_PMU, "%s has no format field '%.*s' "
                             "(it has %s)", pmu->name, (int)klen, p, names);
    }
    if (!deposit(f->mask, value, &bits)) {
        return ptl_set_error(err, PTL_E_PMU, "%s: %.*s=%.*s does not fit "
                             "its %d bits", pmu->name, (int)klen, p,
                             (int)(e - eq - 1), eq + 1,
                             __builtin_popcountll(f->mask));
    }
    config[f->word] = (config[f->word] & ~f->mask) | bits;
    return PTL_OK;
}

ptl_err ptl_pmu_encode(const ptl_pmu *pmu, const char *terms,
                       bool allow_unset,
                       uint64_t config[PTL_PMU_CONFIG_WORDS],
                       ptl_error *err)
{
    const char *p = terms;

    if (!*p) {
        return ptl_set_error(err, PTL_E_PMU, "%s: no event given",
                             pmu->name);
    }
    for (;;) {
        const char *e = p + strcspn(p, ",");
        ptl_err rc = encode_term(pmu, p, e, allow_unset, config, err);

        if (rc != PTL_OK) {
            return rc;
        }
        if (!*e) {
            return PTL_OK;
        }
        p = e + 1;
    }
}

/* Whether the terms [p, e) have a term with key [k, k + klen). */
static bool has_key(const char *p, const char *e, const char *k, size_t klen)
{
    while (p < e) {
        const char *t = p + strcspn(p, ",");
        size_t n;

        if (t > e) {
            t = e;
        }
        n = strcspn(p, "=,");
        if (n > (size_t)(t - p)) {
            n = (size_t)(t - p);
        }
        if (n == klen && !strncmp(p, k, klen)) {
            return true;
        }
        p = t + 1;
    }
    return false;
}

/* The alias file of name in dir/events: exact, else ignoring case. */
static bool find_alias(const char *events, const char *name, size_t len,
                       char *file, size_t file_len)
{
    DIR *d = opendir(events);
    struct dirent *de;
    bool found = false;

    if (!d) {
        return false;
    }
    while ((de = readdir(d)) && !found) {
        if (strlen(de->d_name) == len && !strncmp(de->d_name, name, len)) {
            snprintf(file, file_len, "%s", de->d_name);
            found = true;
        }
    }
    rewinddir(d);
    while (!found && (de = readdir(d))) {
        if (strlen(de->d_name) == len &&
            !strncasecmp(de->d_name, name, len)) {
            snprintf(file, file_len, "%s", de->d_name);
            found = true;
        }
    }
    closedir(d);
    return found;
}

ptl_err ptl_pmu_event_get(const ptl_pmu *pmu, const char *spec,
                          ptl_pmu_event *ev, ptl_error *err)
{
    const char *first_end = spec + strcspn(spec, ",");
    size_t flen = (size_t)(first_end - spec);
    const char *rest = spec;
    ptl_err rc;

    memset(ev, 0, sizeof(ev[0]));
    ev->scale = 1.0;
    snprintf(ev->name, sizeof(ev->name), "%s", spec);
    if (!*spec) {
        return ptl_set_error(err, PTL_E_PMU, "%s: no event given",
                             pmu->name);
    }
    /* a first term without a value that is no field nor word: an alias */
    if (!memchr(spec, '=', flen) && !find_format(pmu, spec, flen) &&
        word_index(spec, flen) < 0) {
        char events[PATH_MAX + 16], file[256], path[PATH_MAX + 300];
        char text[ATTR_MAX];
        ptl_error e = { 0 };

        snprintf(events, sizeof(events), "%s/events", pmu->sysfs);
        if (flen >= sizeof(file) - 16 ||
            !find_alias(events, spec, flen, file, sizeof(file))) {
            return ptl_set_error(err, PTL_E_PMU, "%s has no event '%.*s' "
                                 "(see %s)", pmu->name, (int)flen, spec,
                                 events);
        }
        snprintf(path, sizeof(path), "%s/%s", events, file);
        if (!read_attr(path, text, sizeof(text))) {
            return attr_error(path, err);
        }
        rc = ptl_pmu_encode(pmu, text, true, ev->config, &e);
        if (rc != PTL_OK) {
            return ptl_set_error(err, rc, "event %s: %s", file, e.msg);
        }
        rest = *first_end ? first_end + 1 : first_end;
        if (*rest) {
            rc = ptl_pmu_encode(pmu, rest, false, ev->config, err);
            if (rc != PTL_OK) {
                return rc;
            }
        }
        /* every term the alias leaves open ("lane=?") must be given */
        for (const char *p = text; *p;) {
            const char *e = p + strcspn(p, ",");
            const char *eq = memchr(p, '=', (size_t)(e - p));

            if (eq && e - eq == 2 && eq[1] == '?' &&
                !has_key(rest, rest + strlen(rest), p, (size_t)(eq - p))) {
                return ptl_set_error(err, PTL_E_PMU, "%s/%s/ needs "
                                     "%.*s=N (its sysfs entry is '%s')",
                                     pmu->name, file, (int)(eq - p), p,
                                     text);
            }
            p = *e ? e + 1 : e;
        }
        snprintf(path, sizeof(path), "%s/%s.scale", events, file);
        if (read_attr(path, text, sizeof(text))) {
            char *end;
            double scale = strtod(text, &end);

            if (end == text || *end || !(scale > 0)) {
                return ptl_set_error(err, PTL_E_PMU, "%s: '%s' is not a "
                                     "scale", path, text);
            }
            ev->scale = scale;
        }
        snprintf(path, sizeof(path), "%s/%s.unit", events, file);
        if (read_attr(path, text, sizeof(text))) {
            snprintf(ev->unit, sizeof(ev->unit), "%.31s", text);
        }
        return PTL_OK;
    }
    return ptl_pmu_encode(pmu, spec, false, ev->config, err);
}

/* --------------------------------------------------- perf_event_open */

struct ptl_pmu_counter {
    int fd;
    char label[200];            /* "pmu/event/" for messages */
};

int ptl_perf_paranoid(void)
{
    char text[32];
    uint64_t v;
    bool neg;

    if (!read_attr(PARANOID_FILE, text, sizeof(text))) {
        return INT_MIN;
    }
    neg = text[0] == '-';
    if (!parse_number(text + neg, strlen(text + neg), &v) || v > INT_MAX) {
        return INT_MIN;
    }
    return neg ? -(int)v : (int)v;
}

static ptl_err label_error(const char *label, int errnum, ptl_error *err)
{
    const char *why = strerror(errnum);

    switch (errnum) {
    case EACCES:
    case EPERM: {
        int level = ptl_perf_paranoid();
        char lv[32];

        if (level == INT_MIN) {
            snprintf(lv, sizeof(lv), "unreadable");
        } else {
            snprintf(lv, sizeof(lv), "%d", level);
        }
        return ptl_set_error(err, PTL_E_PERM, "counting %s was refused (%s): "
                             "needs root or CAP_PERFMON; " PARANOID_FILE
                             " is %s", label, why, lv);
    }
    case ENOSPC:
    case EBUSY:
        return ptl_set_error(err, PTL_E_BUSY, "%s: the PMU's counter is in "
                             "use (%s): another perf session counts an event "
                             "that needs it; try again when it ends", label,
                             why);
    case ENOENT:
        return ptl_set_error(err, PTL_E_PMU, "%s: no such PMU or event (%s): "
                             "the PMU went away or its type changed (is its "
                             "driver still loaded?)", label, why);
    case ENODEV:
        return ptl_set_error(err, PTL_E_PMU, "%s: the PMU or its CPU is gone "
                             "(%s)", label, why);
    case ENOSYS:
        return ptl_set_error(err, PTL_E_PMU, "%s: perf_event_open is not "
                             "available (%s): a kernel without "
                             "CONFIG_PERF_EVENTS, or a seccomp filter", label,
                             why);
    case E2BIG:
        return ptl_set_error(err, PTL_E_PMU, "%s: the kernel does not know "
                             "config3 (%s)", label, why);
    case EMFILE:
    case ENFILE:
    case ENOMEM:
        return ptl_set_error(err, PTL_E_INTERNAL, "%s: %s", label, why);
    default:
        return ptl_set_error(err, PTL_E_PMU, "%s: the PMU refused the event "
                             "(%s)", label, why);
    }
}

ptl_err ptl_pmu_errno_error(const ptl_pmu *pmu, const char *event,
                            int errnum, ptl_error *err)
{
    char label[200];

    snprintf(label, sizeof(label), "%s/%s/", pmu->name, event);
    return label_error(label, errnum, err);
}

/* perf_event_attr up to config3 (PERF_ATTR_SIZE_VER8), whatever the headers */
#define ATTR_SIZE_CONFIG3 136

ptl_err ptl_pmu_counter_open(const ptl_pmu *pmu, const ptl_pmu_event *ev,
                             ptl_pmu_counter **out, ptl_error *err)
{
    union {
        struct perf_event_attr attr;
        uint64_t words[ATTR_SIZE_CONFIG3 / 8];
    } a;
    ptl_pmu_counter *c;
    long fd;

    *out = NULL;
    memset(&a, 0, sizeof(a));
    a.attr.size = sizeof(a.attr);
    a.attr.type = pmu->type;
    a.attr.config = ev->config[0];
    a.attr.config1 = ev->config[1];
    a.attr.config2 = ev->config[2];
    if (ev->config[3]) {
        a.words[128 / 8] = ev->config[3];
        if (a.attr.size < ATTR_SIZE_CONFIG3) {
            a.attr.size = ATTR_SIZE_CONFIG3;
        }
    }
    a.attr.disabled = 1;
    a.attr.inherit = 0;
    a.attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
                         PERF_FORMAT_TOTAL_TIME_RUNNING;
    c = calloc(1, sizeof(*c));
    if (!c) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    snprintf(c->label, sizeof(c->label), "%s/%s/", pmu->name, ev->name);
    /* system wide on the PMU's CPU: pid -1, no group */
    fd = syscall(SYS_perf_event_open, &a.attr, -1, pmu->cpu, -1,
                 PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        ptl_err rc = label_error(c->label, errno, err);

        free(c);
        return rc;
    }
    c->fd = (int)fd;
    *out = c;
    return PTL_OK;
}

ptl_err ptl_pmu_counter_enable(ptl_pmu_counter *c, ptl_error *err)
{
    if (ioctl(c->fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        return label_error(c->label, errno, err);
    }
    return PTL_OK;
}

ptl_err ptl_pmu_counter_disable(ptl_pmu_counter *c, ptl_error *err)
{
    if (ioctl(c->fd, PERF_EVENT_IOC_DISABLE, 0) != 0) {
        return label_error(c->label, errno, err);
    }
    return PTL_OK;
}

ptl_err ptl_pmu_counter_read(ptl_pmu_counter *c, ptl_pmu_value *v,
                             ptl_error *err)
{
    uint64_t buf[3];
    ssize_t n = read(c->fd, buf, sizeof(buf));

    memset(v, 0, sizeof(*v));
    if (n < 0) {
        return label_error(c->label, errno, err);
    }
    /* an event in error state (it could never be scheduled) reads nothing */
    if (n == 0) {
        return label_error(c->label, ENOSPC, err);
    }
    if (n != (ssize_t)sizeof(buf)) {
        return ptl_set_error(err, PTL_E_PMU, "%s: short read of the count "
                             "(%zd bytes)", c->label, n);
    }
    v->value = buf[0];
    v->enabled_ns = buf[1];
    v->running_ns = buf[2];
    if (v->enabled_ns > 0 && v->running_ns == 0) {
        return ptl_set_error(err, PTL_E_BUSY, "%s was enabled for %.3f s but "
                             "never counted: the PMU's counter is in use by "
                             "another perf session; try again when it ends",
                             c->label, v->enabled_ns / 1e9);
    }
    return PTL_OK;
}

void ptl_pmu_counter_close(ptl_pmu_counter *c)
{
    if (c) {
        close(c->fd);
        free(c);
    }
}
