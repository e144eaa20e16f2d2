/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Finding a telemetry block: scan the PCI functions with libpci, read the
 * NDK device tree from the device-tree VSEC through libpci's configuration
 * space access, pick the N-th telemetry node and map the BAR that holds it
 * through sysfs, exactly as on a host with a real card.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <pci/pci.h>

#include "pcie-telemetry.h"
#include "ptl-sysfs.h"

/* The NDK device-tree VSEC: header at +4, then registers. */
#define VSEC_HEADER      PTL_VSEC_REG_HEADER
#define VSEC_ENDPOINT    PTL_VSEC_REG_ENDPOINT
#define VSEC_TREE_LEN    PTL_VSEC_REG_LENGTH
#define VSEC_TREE_SEL    PTL_VSEC_REG_INDEX
#define VSEC_TREE_DATA   PTL_VSEC_REG_DATA
/* the shortest capability that holds the data register */
#define VSEC_MIN_LEN     (PTL_VSEC_REG_DATA + 4)
/* Far above any real tree; the NDK driver itself stops at 64 KiB. */
#define TREE_MAX_BYTES   (1u << 20)
#define LOCK_TIMEOUT_MS  10000
#define SYSFS_ENV        "PCIE_TELEMETRY_SYSFS"

/* PCI IDs taken by default: the NDK driver's vendors and the virtual card. */
static const struct {
    uint16_t vendor;
    int device;         /* -1: any */
} ndk_ids[] = {
    { 0x18ec, -1 },     /* CESNET */
    { 0x1b26, -1 },     /* Netcope */
    { 0x1bad, -1 },     /* ReflexCES */
    { 0x1c2c, -1 },     /* Silicom (FiberBlaze) */
    { 0x1234, 0x0d7b }, /* the virtual card's default ID */
};
#define NDK_IDS_TEXT "vendors 18ec, 1b26, 1bad, 1c2c and ID 1234:0d7b"

struct ptl_handle {
    ptl_card_info card;
    ptl_node_info node;
    int fd;
    void *map;
    size_t map_len;
    /* the block in the mapped BAR: MMIO, so every access is volatile */
    volatile uint8_t *regs;
    ptl_block *block;
    bool locked;
    /* the card's sysfs directory when it was opened (ptl_handle_present) */
    bool sysfs_known;
    dev_t sysfs_dev;
    ino_t sysfs_ino;
};

/* ------------------------------------------------------------------
 * libpci reports fatal errors through a callback that must not return;
 * leave the failing call with a jump instead of exiting the process.
 */
static __thread sigjmp_buf *pci_jump;
static __thread char pci_msg[256];

static void __attribute__((noreturn, format(printf, 1, 2)))
pci_error_cb(char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(pci_msg, sizeof(pci_msg), fmt, ap);
    va_end(ap);
    if (pci_jump) {
        siglongjmp(*pci_jump, 1);
    }
    abort();
}

static void __attribute__((format(printf, 1, 2)))
pci_warning_cb(char *fmt, ...)
{
    va_list ap;

    /* kept for a later message; libpci would print it otherwise */
    va_start(ap, fmt);
    vsnprintf(pci_msg, sizeof(pci_msg), fmt, ap);
    va_end(ap);
}

static void __attribute__((format(printf, 1, 2)))
pci_debug_cb(char *fmt, ...)
{
}

/* Runs fn(ctx); false if libpci raised an error inside it. */
static bool pci_guard(void (*fn)(void *), void *ctx)
{
    sigjmp_buf jb;
    sigjmp_buf *prev = pci_jump;

    if (sigsetjmp(jb, 0)) {
        pci_jump = prev;
        return false;
    }
    pci_jump = &jb;
    fn(ctx);
    pci_jump = prev;
    return true;
}

/* ------------------------------------------------------------------
 * Scan state.
 */
typedef struct cand {
    struct pci_dev *dev;
    ptl_card_info ci;
    ptl_err code;               /* why ci has no usable tree */
    char msg[512];
} cand;

typedef struct scan {
    const ptl_find_opts *o;
    struct pci_access *pacc;
    char sysfs[PATH_MAX];       /* libpci's sysfs.path */
    bool have_slot, have_idf;
    struct pci_filter slot, idf;
    char *slot_text;            /* -d as a slot, or NULL */
    struct pci_filter *extra;
    unsigned nextra;
    unsigned searched;
    cand *cands;
    unsigned ncands;
} scan;

void ptl_find_opts_init(ptl_find_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->bar = -1;
    o->offset = -1;
}

/* Copies src into dst, cut to fit. */
static void copy_str(char *dst, size_t len, const char *src)
{
    size_t n = strnlen(src, len - 1);

    memcpy(dst, src, n);
    dst[n] = '\0';
}

bool ptl_parse_bdf(const char *s, unsigned *dom, unsigned *bus,
                   unsigned *dev, unsigned *fn)
{
    int used = -1;

    if (sscanf(s, "%x:%x:%x.%x%n", dom, bus, dev, fn, &used) != 4 ||
        used < 0 || s[used] != '\0') {
        return false;
    }
    return *bus < 256 && *dev < 32 && *fn < 8;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');

    return s ? s + 1 : p;
}

/*
 * -d takes a slot as lspci -s does, a sysfs device path, or /dev/nfbN of
 * the NDK driver; the last two become the slot of the PCI function they
 * stand for. *slot is allocated: a slot is never cut to fit a buffer,
 * which could make it name another function.
 */
static ptl_err resolve_device(const char *dev, char **slot, ptl_error *err)
{
    char real[PATH_MAX], tmp[PATH_MAX + 16];
    unsigned d, b, s, f;
    struct stat st;

    *slot = NULL;
    if (dev[0] != '/') {
        *slot = strdup(dev);
        return *slot ? PTL_OK : ptl_set_error(err, PTL_E_INTERNAL,
                                              "out of memory");
    }
    if (stat(dev, &st) != 0) {
        return ptl_set_error(err, PTL_E_NO_CARD, "cannot find %s: %s", dev,
                             strerror(errno));
    }
    if (S_ISCHR(st.st_mode)) {
        /* /dev/nfbN: its class device's parent is the PCI function */
        snprintf(tmp, sizeof(tmp), "/sys/dev/char/%u:%u/device",
                 major(st.st_rdev), minor(st.st_rdev));
        if (!realpath(tmp, real)) {
            snprintf(tmp, sizeof(tmp), "/sys/class/nfb/%s/device",
                     base_name(dev));
            if (!realpath(tmp, real)) {
                return ptl_set_error(err, PTL_E_NO_CARD,
                                     "%s has no PCI device behind it in "
                                     "sysfs (is it a device of the NDK "
                                     "driver?)", dev);
            }
        }
    } else if (!realpath(dev, real)) {
        return ptl_set_error(err, PTL_E_NO_CARD, "cannot resolve %s: %s",
                             dev, strerror(errno));
    }
    if (!ptl_parse_bdf(base_name(real), &d, &b, &s, &f)) {
        /* a class device such as /sys/class/nfb/nfb0: follow "device" */
        snprintf(tmp, sizeof(tmp), "%s/device", real);
        if (!realpath(tmp, real) ||
            !ptl_parse_bdf(base_name(real), &d, &b, &s, &f)) {
            return ptl_set_error(err, PTL_E_NO_CARD,
                                 "%s is not a PCI device", dev);
        }
    }
    if (asprintf(slot, "%04x:%02x:%02x.%u", d, b, s, f) < 0) {
        *slot = NULL;
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    return PTL_OK;
}

static bool is_ndk_id(uint16_t vendor, uint16_t device)
{
    for (size_t i = 0; i < sizeof(ndk_ids) / sizeof(ndk_ids[0]); i++) {
        if (ndk_ids[i].vendor == vendor &&
            (ndk_ids[i].device < 0 || ndk_ids[i].device == device)) {
            return true;
        }
    }
    return false;
}

static void scan_init_cb(void *ctx)
{
    scan *s = ctx;
    const char *path;

    s->pacc->method = PCI_ACCESS_SYS_BUS_PCI;
    /* a different sysfs root, for tests with a fake tree */
    path = getenv(SYSFS_ENV);
    if (path && *path) {
        pci_set_param(s->pacc, "sysfs.path", (char *)path);
    }
    pci_init(s->pacc);
    snprintf(s->sysfs, sizeof(s->sysfs), "%s",
             pci_get_param(s->pacc, "sysfs.path"));
    pci_scan_bus(s->pacc);
}

typedef struct fill_ctx {
    struct pci_dev *dev;
    int flags;
} fill_ctx;

static void fill_cb(void *ctx)
{
    fill_ctx *c = ctx;

    pci_fill_info(c->dev, c->flags);
}

static int cmp_dev(const void *a, const void *b)
{
    const struct pci_dev *x = *(struct pci_dev *const *)a;
    const struct pci_dev *y = *(struct pci_dev *const *)b;

    if (x->domain != y->domain) {
        return x->domain < y->domain ? -1 : 1;
    }
    if (x->bus != y->bus) {
        return x->bus < y->bus ? -1 : 1;
    }
    if (x->dev != y->dev) {
        return x->dev < y->dev ? -1 : 1;
    }
    return (int)x->func - (int)y->func;
}

static void scan_free(scan *s)
{
    for (unsigned i = 0; i < s->ncands; i++) {
        free(s->cands[i].ci.nodes);
    }
    free(s->cands);
    free(s->extra);
    free(s->slot_text);
    if (s->pacc) {
        pci_cleanup(s->pacc);
    }
    memset(s, 0, sizeof(*s));
}

/*
 * libpci's parsers write into the text they parse: they get a copy of the
 * whole argument, never one cut to a fixed buffer (a cut ID or slot can
 * match another function).
 */
static char *parse_copy(char *(*parse)(struct pci_filter *, char *),
                        struct pci_filter *f, const char *text, bool *oom)
{
    char *copy = strdup(text);
    char *msg;

    *oom = !copy;
    if (!copy) {
        return NULL;
    }
    msg = parse(f, copy);
    free(copy);
    return msg;
}

static ptl_err parse_filters(scan *s, ptl_error *err)
{
    const ptl_find_opts *o = s->o;
    bool oom = false;
    char *msg;

    if (o->device && *o->device) {
        ptl_err r = resolve_device(o->device, &s->slot_text, err);

        if (r != PTL_OK) {
            return r;
        }
        pci_filter_init(s->pacc, &s->slot);
        msg = parse_copy(pci_filter_parse_slot, &s->slot, s->slot_text,
                         &oom);
        if (msg) {
            return ptl_set_error(err, PTL_E_USAGE,
                                 "-d %s: %s (expected [[domain:]bus:]"
                                 "slot[.func], a sysfs device path or "
                                 "/dev/nfbN)", o->device, msg);
        }
        s->have_slot = !oom;
    }
    if (o->id_filter && *o->id_filter && !oom) {
        pci_filter_init(s->pacc, &s->idf);
        msg = parse_copy(pci_filter_parse_id, &s->idf, o->id_filter, &oom);
        if (msg) {
            return ptl_set_error(err, PTL_E_USAGE,
                                 "ID %s: %s (expected vendor:device in hex, "
                                 "as lspci -d takes it)", o->id_filter, msg);
        }
        s->have_idf = !oom;
    }
    if (o->extra_ids && !oom) {
        unsigned n = 0;

        while (o->extra_ids[n]) {
            n++;
        }
        s->extra = calloc(n ? n : 1, sizeof(*s->extra));
        if (!s->extra) {
            return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
        }
        for (unsigned i = 0; i < n && !oom; i++) {
            pci_filter_init(s->pacc, &s->extra[i]);
            msg = parse_copy(pci_filter_parse_id, &s->extra[i],
                             o->extra_ids[i], &oom);
            if (msg) {
                return ptl_set_error(err, PTL_E_USAGE,
                                     "ID %s: %s (expected vendor:device in "
                                     "hex)", o->extra_ids[i], msg);
            }
        }
        s->nextra = n;
    }
    if (oom) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    return PTL_OK;
}

/* ------------------------------------------------------------------
 * The device tree behind a device-tree VSEC, through any accessor of the
 * configuration space: libpci's here, a fuzzer's or a test's elsewhere.
 */
/*
 * The decompressed tree behind the VSEC at cap (*fdt malloc'd) and the
 * endpoint its register gives (-1: not given or not read).
 */
static ptl_err read_tree(const ptl_config_ops *ops, void *opaque,
                         unsigned cap, const char *name, int *endpoint,
                         void **fdt, size_t *fdt_len, ptl_error *err)
{
    uint32_t endpoint_reg, tree_len, words;
    const char *why;
    uint8_t *buf;
    ptl_error e = { 0 };
    ptl_err r;

    *endpoint = -1;
    *fdt = NULL;
    *fdt_len = 0;
    if (!ops->read32(opaque, cap + VSEC_ENDPOINT, &endpoint_reg) ||
        !ops->read32(opaque, cap + VSEC_TREE_LEN, &tree_len)) {
        why = ops->error ? ops->error(opaque) : NULL;
        return ptl_set_error(err, PTL_E_DEVTREE, "cannot read the "
                             "capabilities of %s: %s", name, why ? why : "");
    }
    *endpoint = (endpoint_reg & 0x80000000u) ? (int)(endpoint_reg & 0xf) : -1;
    if (tree_len == 0 || tree_len > TREE_MAX_BYTES) {
        return ptl_set_error(err, PTL_E_DEVTREE, "the device tree of %s "
                             "cannot be read: its capability gives a length "
                             "of %u bytes", name, tree_len);
    }
    buf = calloc(1, tree_len);
    if (!buf) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    words = (tree_len + 3) / 4;
    for (uint32_t i = 0; i < words; i++) {
        bool selected = ops->write32(opaque, cap + VSEC_TREE_SEL, i);
        uint32_t w;

        if (!selected || !ops->read32(opaque, cap + VSEC_TREE_DATA, &w)) {
            why = ops->error ? ops->error(opaque) : NULL;
            free(buf);
            return ptl_set_error(err, PTL_E_DEVTREE, "the device tree of %s "
                                 "cannot be read: %s word %u failed%s%s",
                                 name, selected ? "reading" : "selecting", i,
                                 why && *why ? ": " : "", why ? why : "");
        }
        for (unsigned k = 0; k < 4; k++) {
            if (4 * i + k < tree_len) {
                buf[4 * i + k] = (uint8_t)(w >> (8 * k));
            }
        }
    }
    r = ptl_devtree_decompress(buf, tree_len, fdt, fdt_len, &e);
    free(buf);
    if (r != PTL_OK) {
        return ptl_set_error(err, r, "the device tree of %s cannot be read: "
                             "%s", name, e.msg);
    }
    return PTL_OK;
}

ptl_err ptl_devtree_read(const ptl_config_ops *ops, void *opaque,
                         unsigned cap, const char *name, int *endpoint,
                         ptl_node_info **nodes, unsigned *n,
                         ptl_firmware_info *fw, ptl_error *err)
{
    void *fdt = NULL;
    size_t fdt_len = 0;
    ptl_error e = { 0 };
    ptl_err r;

    *nodes = NULL;
    *n = 0;
    if (fw) {
        memset(fw, 0, sizeof(*fw));
    }
    r = read_tree(ops, opaque, cap, name, endpoint, &fdt, &fdt_len, err);
    if (r != PTL_OK) {
        return r;
    }
    /* the identity is worth showing even when the nodes are not */
    if (fw) {
        ptl_devtree_firmware(fdt, fdt_len, fw);
    }
    r = ptl_devtree_nodes(fdt, fdt_len, *endpoint < 0 ? 0 : *endpoint,
                          nodes, n, &e);
    free(fdt);
    if (r != PTL_OK) {
        return ptl_set_error(err, r, "the device tree of %s cannot be read: "
                             "%s", name, e.msg);
    }
    if (*n == 0) {
        return ptl_set_error(err, PTL_E_NO_NODE, "%s has no telemetry block "
                             "(no node compatible with %s on endpoint %d in "
                             "its device tree)", name, PTL_COMPATIBLE,
                             *endpoint < 0 ? 0 : *endpoint);
    }
    return PTL_OK;
}

ptl_err ptl_pg381_find(const ptl_config_ops *ops, void *opaque,
                       unsigned cap, const char *name, ptl_dt_node *node,
                       ptl_error *err)
{
    ptl_dt_node *nodes = NULL;
    void *fdt = NULL;
    size_t fdt_len = 0;
    unsigned n = 0;
    int endpoint;
    ptl_error e = { 0 };
    ptl_err r;

    r = read_tree(ops, opaque, cap, name, &endpoint, &fdt, &fdt_len, err);
    if (r != PTL_OK) {
        return r;
    }
    endpoint = endpoint < 0 ? 0 : endpoint;
    r = ptl_devtree_compatible(fdt, fdt_len, PTL_PG381_COMPATIBLE,
                               (unsigned)endpoint, &nodes, &n, &e);
    free(fdt);
    if (r != PTL_OK) {
        return ptl_set_error(err, r, "the device tree of %s cannot be read: "
                             "%s", name, e.msg);
    }
    if (n == 0) {
        return ptl_set_error(err, PTL_E_NO_NODE, "%s has no PG381 traffic "
                             "generator (no node compatible with %s on "
                             "endpoint %d in its device tree)", name,
                             PTL_PG381_COMPATIBLE, endpoint);
    }
    /* the card has one generator; a second would be the next endpoint's */
    *node = nodes[0];
    free(nodes);
    return PTL_OK;
}

/* ------------------------------------------------------------------
 * The device tree of one function.
 */
typedef struct tree_ctx {
    struct pci_dev *dev;
    int cap;                    /* VSEC offset, 0 if none */
} tree_ctx;

static void find_vsec_cb(void *ctx)
{
    tree_ctx *t = ctx;
    struct pci_cap *c;

    pci_fill_info(t->dev, PCI_FILL_EXT_CAPS);
    /* the list is not in config-space order; take the lowest match */
    for (c = t->dev->first_cap; c; c = c->next) {
        uint32_t hdr;

        if (c->type != PCI_CAP_EXTENDED || c->id != PCI_EXT_CAP_ID_VNDR) {
            continue;
        }
        hdr = pci_read_long(t->dev, c->addr + VSEC_HEADER);
        if ((hdr & 0xffff) != PTL_VSEC_ID || (hdr >> 20) < VSEC_MIN_LEN) {
            continue;
        }
        if (!t->cap || (int)c->addr < t->cap) {
            t->cap = c->addr;
        }
    }
}

/* One libpci access, guarded: libpci's errors do not return. */
typedef struct cfg_access {
    struct pci_dev *dev;
    uint32_t offset, value;
    bool ok;
} cfg_access;

static void cfg_read_cb(void *ctx)
{
    cfg_access *a = ctx;

    a->value = pci_read_long(a->dev, (int)a->offset);
}

static void cfg_write_cb(void *ctx)
{
    cfg_access *a = ctx;

    a->ok = pci_write_long(a->dev, (int)a->offset, a->value);
}

static bool pci_cfg_read32(void *opaque, uint32_t offset, uint32_t *value)
{
    cfg_access a = { .dev = opaque, .offset = offset };

    if (!pci_guard(cfg_read_cb, &a)) {
        return false;
    }
    *value = a.value;
    return true;
}

static bool pci_cfg_write32(void *opaque, uint32_t offset, uint32_t value)
{
    cfg_access a = { .dev = opaque, .offset = offset, .value = value };

    return pci_guard(cfg_write_cb, &a) && a.ok;
}

static const char *pci_cfg_error(void *opaque)
{
    return pci_msg;
}

static const ptl_config_ops pci_cfg_ops = {
    .read32 = pci_cfg_read32,
    .write32 = pci_cfg_write32,
    .error = pci_cfg_error,
};

static void cand_fail(cand *c, ptl_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void cand_fail(cand *c, ptl_err code, const char *fmt, ...)
{
    va_list ap;

    c->code = code;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
    va_end(ap);
    /* the card's own record: the message without the card's name */
    copy_str(c->ci.tree_error, sizeof(c->ci.tree_error), c->msg);
}

/* What the kernel lets this process do with a function's config file */
typedef struct config_access {
    int open_errno;             /* 0: it opens for reading */
    bool extended;              /* more than the 256 bytes of PCI */
    bool readable;              /* the bytes at `at` read (CAP_SYS_ADMIN) */
    int write_errno;            /* 0: it opens for writing (if asked) */
} config_access;

/*
 * Without CAP_SYS_ADMIN the kernel gives only the first 64 bytes of the
 * config file and libpci would read all ones beyond them: ask the file
 * itself, reading 4 bytes at `at` (past those 64).
 */
static void config_access_probe(const char *path, off_t at, bool writable,
                                config_access *a)
{
    uint8_t b[4];
    struct stat st;
    int fd;

    memset(a, 0, sizeof(*a));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        a->open_errno = errno;
        return;
    }
    a->extended = fstat(fd, &st) == 0 && st.st_size > 256;
    a->readable = pread(fd, b, sizeof(b), at) == (ssize_t)sizeof(b);
    close(fd);
    if (writable) {
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            a->write_errno = errno;
        } else {
            close(fd);
        }
    }
}

static bool perm_errno(int e)
{
    return e == EACCES || e == EPERM;
}

/*
 * The card's extended configuration space (its device tree) must read
 * and, for the tree's word index, write.
 */
static bool check_config(scan *s, cand *c)
{
    char path[PATH_MAX + 32];
    config_access a;

    snprintf(path, sizeof(path), "%s/config", c->ci.sysfs);
    config_access_probe(path, 0x100, true, &a);
    if (a.open_errno) {
        if (perm_errno(a.open_errno)) {
            cand_fail(c, PTL_E_PERM, "reading the configuration space of "
                      "%s needs root (CAP_SYS_ADMIN)", c->ci.slot);
        } else {
            cand_fail(c, PTL_E_DEVTREE, "cannot open %s: %s", path,
                      strerror(a.open_errno));
        }
        return false;
    }
    if (!a.extended) {
        cand_fail(c, PTL_E_DEVTREE, "%s has no NDK device tree: it has no "
                  "extended configuration space (conventional PCI); "
                  "--bar and --offset reach the block anyway", c->ci.slot);
        return false;
    }
    if (!a.readable) {
        cand_fail(c, PTL_E_PERM, "reading the configuration space of %s "
                  "needs root (CAP_SYS_ADMIN)", c->ci.slot);
        return false;
    }
    if (perm_errno(a.write_errno)) {
        cand_fail(c, PTL_E_PERM, "writing the configuration space of %s "
                  "needs root (CAP_SYS_ADMIN)", c->ci.slot);
        return false;
    }
    (void)s;
    return true;
}

static void probe_tree(scan *s, cand *c)
{
    tree_ctx t = { .dev = c->dev };
    ptl_error e = { 0 };
    ptl_err r;

    if (!check_config(s, c)) {
        return;
    }
    if (!pci_guard(find_vsec_cb, &t)) {
        cand_fail(c, PTL_E_DEVTREE, "cannot read the capabilities of %s: "
                  "%s", c->ci.slot, pci_msg);
        return;
    }
    if (!t.cap) {
        cand_fail(c, PTL_E_DEVTREE, "%s has no NDK device tree (no "
                  "vendor-specific capability 0x%04x); --bar and --offset "
                  "reach the block anyway", c->ci.slot, PTL_VSEC_ID);
        return;
    }
    c->ci.has_vsec = true;
    r = ptl_devtree_read(&pci_cfg_ops, c->dev, (unsigned)t.cap, c->ci.slot,
                         &c->ci.endpoint, &c->ci.nodes, &c->ci.nnodes,
                         &c->ci.firmware, &e);
    if (r != PTL_OK) {
        cand_fail(c, r, "%s", e.msg);
    }
}

/* ------------------------------------------------------------------
 * The PCI Express link (decoded in ptl-card.c).
 */
typedef struct link_ctx {
    struct pci_dev *dev;
    ptl_link *link;
} link_ctx;

static void read_link_cb(void *ctx)
{
    link_ctx *l = ctx;
    struct pci_cap *cap;

    /*
     * Without root the kernel returns only the first 64 bytes of the
     * configuration space: libpci then finds no capability, and the
     * link is not shown.
     */
    pci_fill_info(l->dev, PCI_FILL_CAPS);
    cap = pci_find_cap(l->dev, PCI_CAP_ID_EXP, PCI_CAP_NORMAL);
    if (!cap) {
        return;
    }
    ptl_link_decode(pci_read_word(l->dev, cap->addr + PCI_EXP_FLAGS),
                    pci_read_long(l->dev, cap->addr + PCI_EXP_LNKCAP),
                    pci_read_word(l->dev, cap->addr + PCI_EXP_LNKSTA),
                    l->link);
}

static void read_link(cand *c)
{
    link_ctx l = { .dev = c->dev, .link = &c->ci.link };

    if (!pci_guard(read_link_cb, &l)) {
        memset(&c->ci.link, 0, sizeof(c->ci.link));
    }
}

/*
 * Every function that passes the filters becomes a candidate; with
 * read_trees its device tree is read too.
 */
static ptl_err scan_run(scan *s, const ptl_find_opts *o, bool read_trees,
                        ptl_error *err)
{
    struct pci_dev **devs = NULL, *d;
    unsigned ndev = 0;
    ptl_err r;

    memset(s, 0, sizeof(*s));
    s->o = o;
    s->pacc = pci_alloc();
    if (!s->pacc) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    s->pacc->error = pci_error_cb;
    s->pacc->warning = pci_warning_cb;
    s->pacc->debug = pci_debug_cb;
    pci_msg[0] = '\0';
    if (!pci_guard(scan_init_cb, s)) {
        /* libpci's state is unknown after a failed init: leak it */
        s->pacc = NULL;
        return ptl_set_error(err, PTL_E_NO_CARD,
                             "cannot scan the PCI functions: %s", pci_msg);
    }
    r = parse_filters(s, err);
    if (r != PTL_OK) {
        return r;
    }

    for (d = s->pacc->devices; d; d = d->next) {
        ndev++;
    }
    devs = calloc(ndev ? ndev : 1, sizeof(*devs));
    s->cands = calloc(ndev ? ndev : 1, sizeof(*s->cands));
    if (!devs || !s->cands) {
        free(devs);
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    ndev = 0;
    for (d = s->pacc->devices; d; d = d->next) {
        devs[ndev++] = d;
    }
    qsort(devs, ndev, sizeof(*devs), cmp_dev);

    for (unsigned i = 0; i < ndev; i++) {
        fill_ctx fc = { devs[i], PCI_FILL_IDENT | PCI_FILL_BASES |
                                 PCI_FILL_SIZES | PCI_FILL_CLASS };
        bool accept;
        int len;
        cand *c;

        d = devs[i];
        if (!pci_guard(fill_cb, &fc)) {
            continue;
        }
        if (s->have_slot && !pci_filter_match(&s->slot, d)) {
            continue;
        }
        s->searched++;
        if (s->have_idf && !pci_filter_match(&s->idf, d)) {
            continue;
        }
        /* a named device or ID is taken whatever its vendor */
        accept = s->have_slot || s->have_idf ||
                 is_ndk_id(d->vendor_id, d->device_id);
        for (unsigned k = 0; !accept && k < s->nextra; k++) {
            accept = pci_filter_match(&s->extra[k], d);
        }
        if (!accept) {
            continue;
        }
        c = &s->cands[s->ncands++];
        c->dev = d;
        snprintf(c->ci.slot, sizeof(c->ci.slot), "%04x:%02x:%02x.%u",
                 (unsigned)d->domain, d->bus, d->dev, d->func);
        len = snprintf(c->ci.sysfs, sizeof(c->ci.sysfs), "%s/devices/%s",
                       s->sysfs, c->ci.slot);
        if (len < 0 || (size_t)len >= sizeof(c->ci.sysfs)) {
            free(devs);
            return ptl_set_error(err, PTL_E_INTERNAL, "the sysfs path of %s "
                                 "under %s is too long", c->ci.slot, s->sysfs);
        }
        c->ci.vendor = d->vendor_id;
        c->ci.device = d->device_id;
        c->ci.endpoint = -1;
        read_link(c);
        if (read_trees) {
            probe_tree(s, c);
        }
    }
    free(devs);
    return PTL_OK;
}

static ptl_err no_card(const scan *s, ptl_error *err)
{
    const ptl_find_opts *o = s->o;

    if (s->have_slot) {
        return ptl_set_error(err, PTL_E_NO_CARD,
                             "no PCI function matches %s%s%s%s%s",
                             s->slot_text,
                             strcmp(s->slot_text, o->device) ? " (" : "",
                             strcmp(s->slot_text, o->device) ? o->device : "",
                             strcmp(s->slot_text, o->device) ? ")" : "",
                             s->have_idf ? " and the ID filter" : "");
    }
    if (s->have_idf) {
        return ptl_set_error(err, PTL_E_NO_CARD,
                             "no PCI function with ID %s found (searched %u "
                             "PCI functions); use -d to name a device",
                             o->id_filter, s->searched);
    }
    return ptl_set_error(err, PTL_E_NO_CARD,
                         "no NDK card found (searched %u PCI functions for "
                         NDK_IDS_TEXT "%s); use -d to name a device, "
                         "--id or --add-id for another vendor:device",
                         s->searched, s->nextra ? " and the added IDs" : "");
}

ptl_err ptl_list(const ptl_find_opts *o, ptl_card_info **cards, unsigned *n,
                 ptl_error *err)
{
    scan s;
    ptl_err r;

    *cards = NULL;
    *n = 0;
    r = scan_run(&s, o, true, err);
    if (r == PTL_OK && s.ncands == 0) {
        r = no_card(&s, err);
    }
    if (r != PTL_OK) {
        scan_free(&s);
        return r;
    }
    *cards = calloc(s.ncands, sizeof(**cards));
    if (!*cards) {
        scan_free(&s);
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    for (unsigned i = 0; i < s.ncands; i++) {
        (*cards)[i] = s.cands[i].ci;
        s.cands[i].ci.nodes = NULL;     /* moved */
    }
    *n = s.ncands;
    scan_free(&s);
    return PTL_OK;
}

void ptl_list_free(ptl_card_info *cards, unsigned n)
{
    if (!cards) {
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        free(cards[i].nodes);
    }
    free(cards);
}

/* ------------------------------------------------------------------
 * Mapping the BAR.
 *
 * The accessors go through volatile pointers of the access's own width:
 * each is exactly one load or store of 4 (or 8) bytes on the bus, never
 * merged, split, repeated or left out by the compiler (the offsets are
 * multiples of the width, so the accesses are naturally aligned).
 */
static uint32_t bar_read32(void *opaque, uint32_t offset)
{
    ptl_handle *h = opaque;

    return *(volatile uint32_t *)(h->regs + offset);
}

static void bar_write32(void *opaque, uint32_t offset, uint32_t value)
{
    ptl_handle *h = opaque;

    *(volatile uint32_t *)(h->regs + offset) = value;
}

static uint64_t bar_read64(void *opaque, uint32_t offset)
{
    ptl_handle *h = opaque;

    return *(volatile uint64_t *)(h->regs + offset);
}

static const ptl_regs_ops bar_ops = {
    .read32 = bar_read32,
    .write32 = bar_write32,
    .read64 = bar_read64,
    .now_ns = NULL,
};

/* Start, size and flags of a BAR from the sysfs "resource" file. */
static bool read_resource(const char *sysfs, unsigned bar, uint64_t *size,
                          uint64_t *flags)
{
    char path[PATH_MAX + 16], line[256];
    unsigned long long start, end, fl;
    FILE *f;
    bool ok = false;

    snprintf(path, sizeof(path), "%s/resource", sysfs);
    f = fopen(path, "re");
    if (!f) {
        return false;
    }
    for (unsigned i = 0; fgets(line, sizeof(line), f); i++) {
        if (i == bar) {
            if (sscanf(line, "%llx %llx %llx", &start, &end, &fl) == 3) {
                *size = end > start ? end - start + 1 : 0;
                *flags = fl;
                ok = true;
            }
            break;
        }
    }
    fclose(f);
    return ok;
}

static void driver_name(const char *sysfs, char *buf, size_t len)
{
    char path[PATH_MAX + 16], real[PATH_MAX];

    snprintf(path, sizeof(path), "%s/driver", sysfs);
    if (realpath(path, real)) {
        copy_str(buf, len, base_name(real));
    } else {
        buf[0] = '\0';
    }
}

/*
 * The Command register's Memory Space bit, from the sysfs config file (its
 * first 64 bytes are everyone's): false only when it reads clear. With it
 * clear the function decodes none of its BARs, which read all ones. A
 * driver's pci_enable_device() or the firmware sets it; a kernel booted
 * without firmware that enumerates PCI (e.g. QEMU's arm64 virt with
 * -kernel) leaves it clear on functions no driver took.
 */
static bool memory_decoding_on(const char *sysfs)
{
    char path[PATH_MAX + 16];
    uint8_t cmd[2];
    int fd;
    ssize_t got;

    snprintf(path, sizeof(path), "%s/config", sysfs);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return true;
    }
    got = pread(fd, cmd, sizeof(cmd), 4);
    close(fd);
    return got != (ssize_t)sizeof(cmd) || (cmd[0] & 0x02);
}

static ptl_err decoding_off(const ptl_card_info *ci, ptl_error *err)
{
    return ptl_set_error(err, PTL_E_BAR, "%s does not decode its BARs (the "
                         "Memory Space bit of its Command register is "
                         "clear: no driver or firmware has enabled it); as "
                         "root: echo 1 > %s/enable", ci->slot, ci->sysfs);
}

/*
 * Maps the pages of len bytes at the handle's node (h->node.bar and
 * offset) of the card's BAR through its sysfs resource file; what names
 * them in messages ("the block").
 */
static ptl_err map_window(ptl_handle *h, const char *what, uint64_t len,
                          ptl_error *err)
{
    const ptl_card_info *ci = &h->card;
    unsigned bar = h->node.bar;
    uint64_t off = h->node.offset;
    uint64_t size = 0, flags = 0, moff, mend;
    char path[PATH_MAX + 16], drv[64];
    struct stat st;
    long pg = sysconf(_SC_PAGESIZE);

    snprintf(path, sizeof(path), "%s/resource%u", ci->sysfs, bar);
    if (stat(path, &st) != 0) {
        return ptl_set_error(err, PTL_E_BAR, "BAR%u of %s cannot be mapped: "
                             "%s: %s", bar, ci->slot, path, strerror(errno));
    }
    if (read_resource(ci->sysfs, bar, &size, &flags) && (flags & 0x100)) {
        return ptl_set_error(err, PTL_E_BAR, "BAR%u of %s is an I/O port "
                             "BAR, not memory", bar, ci->slot);
    }
    if (size == 0) {
        size = st.st_size;
    }
    if (size == 0) {
        return ptl_set_error(err, PTL_E_BAR, "BAR%u of %s is not "
                             "implemented", bar, ci->slot);
    }
    if (off % 8 != 0) {
        return ptl_set_error(err, PTL_E_BAR, "offset 0x%llx of %s in "
                             "BAR%u of %s is not a multiple of 8",
                             (unsigned long long)off, what, bar, ci->slot);
    }
    if (off > size || size - off < len) {
        return ptl_set_error(err, PTL_E_BAR, "BAR%u of %s is 0x%llx bytes, "
                             "%s needs 0x%llx..0x%llx", bar, ci->slot,
                             (unsigned long long)size, what,
                             (unsigned long long)off,
                             (unsigned long long)(off + len));
    }

    if (!memory_decoding_on(ci->sysfs)) {
        return decoding_off(ci, err);
    }
    h->fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
    if (h->fd < 0) {
        if (errno == EACCES || errno == EPERM) {
            return ptl_set_error(err, PTL_E_PERM, "opening %s needs root",
                                 path);
        }
        return ptl_set_error(err, PTL_E_BAR, "cannot open %s: %s", path,
                             strerror(errno));
    }
    /* map only the pages of the block, not the whole BAR */
    moff = off & ~(uint64_t)(pg - 1);
    mend = (off + len + pg - 1) & ~(uint64_t)(pg - 1);
    if (mend > size) {
        mend = size;
    }
    h->map_len = mend - moff;
    h->map = mmap(NULL, h->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
                  h->fd, (off_t)moff);
    if (h->map == MAP_FAILED) {
        int e = errno;

        h->map = NULL;
        driver_name(ci->sysfs, drv, sizeof(drv));
        if (e == EPERM || e == EINVAL || e == EACCES) {
            /*
             * The kernel refuses a mapping of a range a driver claimed
             * (CONFIG_IO_STRICT_DEVMEM) with EINVAL, and under lockdown
             * with EPERM.
             */
            return ptl_set_error(err, PTL_E_PERM,
                                 "mapping BAR%u of %s was refused (%s): "
                                 "run as root, and when a kernel driver%s%s "
                                 "owns the BAR boot with iomem=relaxed "
                                 "(and without kernel lockdown)",
                                 bar, ci->slot, strerror(e),
                                 drv[0] ? " such as " : "", drv);
        }
        return ptl_set_error(err, PTL_E_BAR, "cannot map BAR%u of %s: %s",
                             bar, ci->slot, strerror(e));
    }
    h->regs = (volatile uint8_t *)h->map + (off - moff);
    return PTL_OK;
}

static ptl_err map_block(ptl_handle *h, ptl_error *err)
{
    return map_window(h, "the block", PTL_BLOCK_SIZE, err);
}

static ptl_handle *handle_new(void)
{
    ptl_handle *h = calloc(1, sizeof(*h));

    if (h) {
        h->fd = -1;
    }
    return h;
}

/*
 * A handle for candidate c of scan s, which it frees (also when out of
 * memory: NULL); the card's nodes move into the handle.
 */
static ptl_handle *handle_take(scan *s, cand *c)
{
    ptl_handle *h = handle_new();

    if (h) {
        h->card = c->ci;
        c->ci.nodes = NULL;
    }
    scan_free(s);
    return h;
}

/*
 * Picks the card to open: the first with a telemetry node, else the
 * most telling error of all candidates.
 */
static ptl_err pick(scan *s, bool explicit_place, cand **out,
                    ptl_error *err)
{
    cand *first_err = NULL;

    if (s->ncands == 0) {
        return no_card(s, err);
    }
    if (explicit_place) {
        *out = &s->cands[0];
        return PTL_OK;
    }
    for (unsigned i = 0; i < s->ncands; i++) {
        cand *c = &s->cands[i];

        if (c->ci.nnodes > 0) {
            *out = c;
            return PTL_OK;
        }
        if (!first_err || (c->code == PTL_E_PERM &&
                           first_err->code != PTL_E_PERM)) {
            first_err = c;
        }
    }
    return ptl_set_error(err, first_err->code, "%s", first_err->msg);
}

/*
 * A card removed while open: the kernel deletes its sysfs directory before
 * it ejects the card (ACPI hotplug) or powers its slot off (pciehp), and
 * from then on the mapping reads what the platform returns for an address
 * nobody decodes: all ones on PCIe hosts, 0 under QEMU, which no register
 * check can tell from an idle block. A directory that is there again with
 * another inode belongs to a device added since.
 */
ptl_err ptl_handle_present(ptl_handle *h, ptl_error *err)
{
    struct stat st;

    if (stat(h->card.sysfs, &st) != 0) {
        if (errno != ENOENT && errno != ENOTDIR && errno != ENODEV) {
            /* cannot tell; the register checks still apply */
            return PTL_OK;
        }
        return ptl_set_error(err, PTL_E_GONE, "%s disappeared (removed from "
                             "the PCI bus: %s is gone)", h->card.slot,
                             h->card.sysfs);
    }
    if (h->sysfs_known &&
        (st.st_dev != h->sysfs_dev || st.st_ino != h->sysfs_ino)) {
        return ptl_set_error(err, PTL_E_GONE, "%s disappeared (removed from "
                             "the PCI bus; the device now at that address "
                             "was added since)", h->card.slot);
    }
    return PTL_OK;
}

/*
 * After a block call that returned rc: a card whose sysfs directory is
 * gone is reported as gone whatever its registers said, and a PTL_E_GONE
 * of the block names the card.
 */
static ptl_err handle_gone(ptl_handle *h, ptl_err rc, ptl_error *err)
{
    if (ptl_handle_present(h, err) != PTL_OK) {
        return PTL_E_GONE;
    }
    if (rc == PTL_E_GONE && !memory_decoding_on(h->card.sysfs)) {
        /* disabled since it was opened (e.g. its driver unbound) */
        return decoding_off(&h->card, err);
    }
    if (rc == PTL_E_GONE) {
        return ptl_set_error(err, PTL_E_GONE, "%s disappeared (not "
                             "responding: its registers read all ones; "
                             "removed, reset or powered off)", h->card.slot);
    }
    return rc;
}

ptl_err ptl_handle_read(ptl_handle *h, ptl_reading *r, ptl_error *err)
{
    return handle_gone(h, ptl_block_read(h->block, r, err), err);
}

ptl_err ptl_handle_clear(ptl_handle *h, ptl_error *err)
{
    return handle_gone(h, ptl_block_clear(h->block, err), err);
}

/* The card's sysfs directory as found, for ptl_handle_present. */
static void note_sysfs(ptl_handle *h)
{
    struct stat st;

    if (stat(h->card.sysfs, &st) == 0) {
        h->sysfs_known = true;
        h->sysfs_dev = st.st_dev;
        h->sysfs_ino = st.st_ino;
    }
}

ptl_err ptl_open_mapped(const ptl_find_opts *o, unsigned index,
                        ptl_handle **out, ptl_error *err)
{
    bool explicit_place = o->bar >= 0 || o->offset >= 0;
    ptl_handle *h;
    cand *c = NULL;
    scan s;
    ptl_err r;

    *out = NULL;
    if (o->bar > 5 || (o->bar >= 0 && o->offset < 0)) {
        return ptl_set_error(err, PTL_E_USAGE, o->bar > 5 ?
                             "BAR %d does not exist (0..5)" :
                             "a BAR needs an offset too (--offset)", o->bar);
    }
    /* a place given by hand needs no device tree */
    r = scan_run(&s, o, !explicit_place, err);
    if (r == PTL_OK) {
        r = pick(&s, explicit_place, &c, err);
    }
    if (r != PTL_OK) {
        scan_free(&s);
        return r;
    }
    h = handle_take(&s, c);
    if (!h) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }

    if (explicit_place) {
        snprintf(h->node.path, sizeof(h->node.path), "(--bar/--offset)");
        h->node.bar = o->bar >= 0 ? (unsigned)o->bar : 0;
        h->node.offset = (uint64_t)o->offset;
        h->node.size = PTL_BLOCK_SIZE;
    } else if (index >= h->card.nnodes) {
        r = ptl_set_error(err, PTL_E_NO_NODE, "%s has %u telemetry "
                          "block%s, index %u is out of range (0..%u)",
                          h->card.slot, h->card.nnodes,
                          h->card.nnodes == 1 ? "" : "s", index,
                          h->card.nnodes - 1);
        ptl_close(h);
        return r;
    } else {
        h->node = h->card.nodes[index];
    }
    if (h->node.size != 0 && h->node.size < PTL_BLOCK_SIZE) {
        r = ptl_set_error(err, PTL_E_DEVTREE, "%s: the telemetry node %s "
                          "is 0x%llx bytes, the block has 0x%x",
                          h->card.slot, h->node.path,
                          (unsigned long long)h->node.size, PTL_BLOCK_SIZE);
        ptl_close(h);
        return r;
    }

    r = map_block(h, err);
    if (r == PTL_OK) {
        note_sysfs(h);
    }
    if (r != PTL_OK) {
        ptl_close(h);
        return r;
    }
    *out = h;
    return PTL_OK;
}

ptl_err ptl_handle_attach(ptl_handle *h, ptl_error *err)
{
    ptl_err r = ptl_handle_lock(h, err);

    if (r == PTL_OK) {
        r = ptl_block_open(&bar_ops, h, &h->block, err);
        ptl_handle_unlock(h);
        if (r != PTL_OK) {
            /* removed since the scan: MAGIC may read 0, not all ones */
            r = handle_gone(h, r, err);
        }
    }
    return r;
}

ptl_err ptl_open(const ptl_find_opts *o, unsigned index, ptl_handle **out,
                 ptl_error *err)
{
    ptl_err r = ptl_open_mapped(o, index, out, err);

    if (r == PTL_OK) {
        r = ptl_handle_attach(*out, err);
        if (r != PTL_OK) {
            ptl_close(*out);
            *out = NULL;
        }
    }
    return r;
}

/*
 * The generator's node of one candidate (its configuration space checked
 * as the scan checks it); false with c->code and c->msg without one.
 */
static bool pg381_node(scan *s, cand *c, ptl_dt_node *node)
{
    tree_ctx t = { .dev = c->dev };
    ptl_error e = { 0 };

    if (!check_config(s, c)) {
        return false;
    }
    if (!pci_guard(find_vsec_cb, &t)) {
        cand_fail(c, PTL_E_DEVTREE, "cannot read the capabilities of %s: "
                  "%s", c->ci.slot, pci_msg);
        return false;
    }
    if (!t.cap) {
        cand_fail(c, PTL_E_DEVTREE, "%s has no NDK device tree (no "
                  "vendor-specific capability 0x%04x); --bar and --offset "
                  "reach the generator anyway", c->ci.slot, PTL_VSEC_ID);
        return false;
    }
    if (ptl_pg381_find(&pci_cfg_ops, c->dev, (unsigned)t.cap, c->ci.slot,
                       node, &e) != PTL_OK) {
        cand_fail(c, e.code, "%s", e.msg);
        return false;
    }
    return true;
}

ptl_err ptl_pg381_open(const ptl_find_opts *o, ptl_handle **out,
                       ptl_dt_node *node, ptl_error *err)
{
    bool explicit_place = o->bar >= 0 || o->offset >= 0;
    cand *c = NULL, *first_err = NULL;
    ptl_handle *h;
    scan s;
    ptl_err r;

    *out = NULL;
    memset(node, 0, sizeof(*node));
    if (o->bar > 5 || (o->bar >= 0 && o->offset < 0)) {
        return ptl_set_error(err, PTL_E_USAGE, o->bar > 5 ?
                             "BAR %d does not exist (0..5)" :
                             "a BAR needs an offset too (--offset)", o->bar);
    }
    /* the telemetry nodes do not matter here: the trees are read below */
    r = scan_run(&s, o, false, err);
    if (r == PTL_OK && s.ncands == 0) {
        r = no_card(&s, err);
    }
    if (r != PTL_OK) {
        scan_free(&s);
        return r;
    }
    if (explicit_place) {
        c = &s.cands[0];
        snprintf(node->path, sizeof(node->path), "(--bar/--offset)");
        node->bar = o->bar >= 0 ? (unsigned)o->bar : 0;
        node->offset = (uint64_t)o->offset;
        node->size = PTL_PG381_WINDOW;
    }
    /* the first card with a generator, else the most telling error */
    for (unsigned i = 0; !c && i < s.ncands; i++) {
        if (pg381_node(&s, &s.cands[i], node)) {
            c = &s.cands[i];
        } else if (!first_err || (s.cands[i].code == PTL_E_PERM &&
                                  first_err->code != PTL_E_PERM)) {
            first_err = &s.cands[i];
        }
    }
    if (!c) {
        r = ptl_set_error(err, first_err->code, "%s", first_err->msg);
        scan_free(&s);
        return r;
    }
    h = handle_take(&s, c);
    if (!h) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }

    snprintf(h->node.path, sizeof(h->node.path), "%s", node->path);
    h->node.bar = node->bar;
    h->node.offset = node->offset;
    h->node.size = node->size;
    if (node->size != 0 && node->size < PTL_PG381_WINDOW) {
        r = ptl_set_error(err, PTL_E_DEVTREE, "%s: the PG381 node %s is "
                          "0x%llx bytes, the generator has 0x%x",
                          h->card.slot, node->path,
                          (unsigned long long)node->size, PTL_PG381_WINDOW);
        ptl_close(h);
        return r;
    }
    r = map_window(h, "the PG381 generator", PTL_PG381_WINDOW, err);
    if (r != PTL_OK) {
        ptl_close(h);
        return r;
    }
    note_sysfs(h);
    *out = h;
    return PTL_OK;
}

const ptl_regs_ops *ptl_handle_regs(ptl_handle *h)
{
    (void)h;
    return &bar_ops;
}

void ptl_close(ptl_handle *h)
{
    if (!h) {
        return;
    }
    if (h->block) {
        ptl_block_close(h->block);
    }
    if (h->map) {
        munmap(h->map, h->map_len);
    }
    if (h->fd >= 0) {
        close(h->fd);           /* drops the lock too */
    }
    free(h->card.nodes);
    free(h);
}

ptl_block *ptl_handle_block(ptl_handle *h)
{
    return h->block;
}

const ptl_card_info *ptl_handle_card(const ptl_handle *h)
{
    return &h->card;
}

const ptl_node_info *ptl_handle_node(const ptl_handle *h)
{
    return &h->node;
}

/*
 * All readers of a card map the same resource file, so an flock on it
 * orders them. A holder that never lets go is reported, not waited for.
 */
ptl_err ptl_handle_lock(ptl_handle *h, ptl_error *err)
{
    struct timespec ms = { 0, 1000000 };

    if (h->locked) {
        return PTL_OK;
    }
    for (unsigned waited = 0;; waited++) {
        if (flock(h->fd, LOCK_EX | LOCK_NB) == 0) {
            h->locked = true;
            return PTL_OK;
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {
            return ptl_set_error(err, PTL_E_INTERNAL, "cannot lock "
                                 "BAR%u of %s: %s", h->node.bar,
                                 h->card.slot, strerror(errno));
        }
        if (waited >= LOCK_TIMEOUT_MS) {
            return ptl_set_error(err, PTL_E_BUSY, "another reader has held "
                                 "the lock of %s for more than %u s",
                                 h->card.slot, LOCK_TIMEOUT_MS / 1000);
        }
        nanosleep(&ms, NULL);
    }
}

void ptl_handle_unlock(ptl_handle *h)
{
    if (h->locked) {
        flock(h->fd, LOCK_UN);
        h->locked = false;
    }
}

/* ------------------------------------------------------------------
 * One function's configuration space after the scan (flit mode of a card
 * and the ports above it): libpci's sysfs access on that function alone.
 */
struct ptl_config {
    struct pci_access *pacc;
    struct pci_dev *dev;
    char slot[16];
    bool extended;              /* more than the 256 bytes of PCI */
    char msg[256];              /* why the last access failed */
};

typedef struct config_init_ctx {
    ptl_config *c;
    unsigned dom, bus, dev, fn;
} config_init_ctx;

static void config_init_cb(void *ctx)
{
    config_init_ctx *i = ctx;
    const char *path = getenv(SYSFS_ENV);

    i->c->pacc->method = PCI_ACCESS_SYS_BUS_PCI;
    if (path && *path) {
        pci_set_param(i->c->pacc, "sysfs.path", (char *)path);
    }
    pci_init(i->c->pacc);
    i->c->dev = pci_get_dev(i->c->pacc, (int)i->dom, (int)i->bus,
                            (int)i->dev, (int)i->fn);
}

/* Reading is checked first, so that a user who may do neither hears of it */
static ptl_err config_check(const char *slot, bool writable, bool *extended,
                            ptl_error *err)
{
    const char *root = getenv(SYSFS_ENV);
    char path[PATH_MAX + 64];
    config_access a;

    snprintf(path, sizeof(path), "%s/devices/%s/config",
             root && *root ? root : "/sys/bus/pci", slot);
    /* the first byte others may not read; the PCIe capability is there */
    config_access_probe(path, 0x40, writable, &a);
    if (a.open_errno) {
        if (perm_errno(a.open_errno)) {
            return ptl_set_error(err, PTL_E_PERM, "reading the configuration "
                                 "space of %s needs root (CAP_SYS_ADMIN)",
                                 slot);
        }
        return ptl_set_error(err, a.open_errno == ENOENT ? PTL_E_NO_CARD
                             : PTL_E_INTERNAL, "cannot open %s: %s", path,
                             strerror(a.open_errno));
    }
    *extended = a.extended;
    if (!a.readable) {
        return ptl_set_error(err, PTL_E_PERM, "reading the configuration "
                             "space of %s needs root (CAP_SYS_ADMIN)", slot);
    }
    if (a.write_errno) {
        return ptl_set_error(err, perm_errno(a.write_errno) ? PTL_E_PERM
                             : PTL_E_INTERNAL, "writing the configuration "
                             "space of %s %s", slot,
                             perm_errno(a.write_errno)
                             ? "needs root (CAP_SYS_ADMIN)"
                             : strerror(a.write_errno));
    }
    return PTL_OK;
}

ptl_err ptl_config_open(const char *slot, bool writable, ptl_config **out,
                        ptl_error *err)
{
    config_init_ctx i = { 0 };
    ptl_config *c;
    ptl_err r;

    *out = NULL;
    if (!ptl_parse_bdf(slot, &i.dom, &i.bus, &i.dev, &i.fn)) {
        return ptl_set_error(err, PTL_E_USAGE, "'%s' is not a PCI address "
                             "(domain:bus:dev.fn)", slot);
    }
    c = calloc(1, sizeof(*c));
    if (!c) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    copy_str(c->slot, sizeof(c->slot), slot);
    r = config_check(slot, writable, &c->extended, err);
    if (r != PTL_OK) {
        free(c);
        return r;
    }
    c->pacc = pci_alloc();
    if (!c->pacc) {
        free(c);
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    c->pacc->error = pci_error_cb;
    c->pacc->warning = pci_warning_cb;
    c->pacc->debug = pci_debug_cb;
    pci_msg[0] = '\0';
    i.c = c;
    if (!pci_guard(config_init_cb, &i) || !c->dev) {
        /* libpci's state is unknown after a failed init: leak it */
        r = ptl_set_error(err, PTL_E_INTERNAL, "cannot reach %s through "
                          "libpci: %s", slot, pci_msg);
        free(c);
        return r;
    }
    *out = c;
    return PTL_OK;
}

void ptl_config_close(ptl_config *c)
{
    if (c) {
        /* a device of pci_get_dev is not on the list pci_cleanup frees */
        pci_free_dev(c->dev);
        pci_cleanup(c->pacc);
        free(c);
    }
}

static bool config_read32(void *opaque, uint32_t offset, uint32_t *value)
{
    ptl_config *c = opaque;
    cfg_access a = { .dev = c->dev, .offset = offset };

    if (offset % 4 || offset >= (c->extended ? 4096u : 256u)) {
        snprintf(c->msg, sizeof(c->msg), "0x%x is outside its %s "
                 "configuration space", offset,
                 c->extended ? "4096-byte" : "256-byte");
        return false;
    }
    /* libpci reads all ones on a failed read and says so as a warning */
    pci_msg[0] = '\0';
    if (!pci_guard(cfg_read_cb, &a) || pci_msg[0]) {
        copy_str(c->msg, sizeof(c->msg), pci_msg);
        return false;
    }
    *value = a.value;
    return true;
}

static bool config_write32(void *opaque, uint32_t offset, uint32_t value)
{
    ptl_config *c = opaque;
    cfg_access a = { .dev = c->dev, .offset = offset, .value = value };

    if (offset % 4 || offset >= (c->extended ? 4096u : 256u)) {
        snprintf(c->msg, sizeof(c->msg), "0x%x is outside its "
                 "configuration space", offset);
        return false;
    }
    pci_msg[0] = '\0';
    if (!pci_guard(cfg_write_cb, &a) || !a.ok) {
        copy_str(c->msg, sizeof(c->msg), pci_msg[0] ? pci_msg
                 : "the write was refused");
        return false;
    }
    return true;
}

static const char *config_error(void *opaque)
{
    return ((ptl_config *)opaque)->msg;
}

static const ptl_config_ops config_ops = {
    .read32 = config_read32,
    .write32 = config_write32,
    .error = config_error,
};

const ptl_config_ops *ptl_config_get_ops(void)
{
    return &config_ops;
}
