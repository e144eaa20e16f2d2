/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The port above a card: Linux's dwc_pcie_pmu registers a perf PMU for
 * every Synopsys DesignWare root port with the RAS DES capability, named
 * after the port's address. Walk a PCI function's sysfs ancestry (every
 * directory above it that is a PCI function is a bridge on its path to
 * the root complex) and take the PMUs of those bridges.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pcie-telemetry.h"
#include "ptl-sysfs.h"

#define SYSFS_ENV       "PCIE_TELEMETRY_SYSFS"
#define SYSFS_PCI       "/sys/bus/pci"
#define MAX_BRIDGES     32

void ptl_dwc_pmu_name(unsigned domain, unsigned bus, unsigned devfn,
                      char *buf, size_t len)
{
    /* the driver's sbdf: a 32-bit (domain << 16) | (bus << 8) | devfn */
    uint32_t id = ((uint32_t)domain << 16) | ((bus & 0xff) << 8) |
                  (devfn & 0xff);

    snprintf(buf, len, "dwc_rootport_%x", id);
}

/* The card's sysfs path, resolved: from a path, or an address. */
static ptl_err card_path(const char *card, char *real, ptl_error *err)
{
    char path[PATH_MAX + 64];
    unsigned dom = 0, bus, dev, fn;
    int used = -1;

    if (card[0] == '/') {
        snprintf(path, sizeof(path), "%s", card);
    } else {
        const char *root = getenv(SYSFS_ENV);

        if (!ptl_parse_bdf(card, &dom, &bus, &dev, &fn)) {
            dom = 0;
            if (sscanf(card, "%x:%x.%x%n", &bus, &dev, &fn, &used) != 3 ||
                used < 0 || card[used] != '\0' || bus > 255 || dev > 31 ||
                fn > 7) {
                return ptl_set_error(err, PTL_E_USAGE, "'%s' is not a PCI "
                                     "address ([domain:]bus:dev.fn) nor a "
                                     "sysfs path", card);
            }
        }
        snprintf(path, sizeof(path), "%s/devices/%04x:%02x:%02x.%x",
                 root && *root ? root : SYSFS_PCI, dom, bus, dev, fn);
    }
    if (!realpath(path, real)) {
        return ptl_set_error(err, PTL_E_NO_CARD, "cannot find %s in sysfs "
                             "(%s: %s)", card, path, strerror(errno));
    }
    return PTL_OK;
}

ptl_err ptl_dwc_find(const char *card, ptl_pmu **pmus, unsigned *n,
                     ptl_error *err)
{
    char real[PATH_MAX], dir[PATH_MAX], tried[400];
    const char *base;
    char *slash;
    unsigned dom, bus, dev, fn, found = 0, bridges = 0;
    size_t tlen = 0;
    ptl_pmu *list;
    ptl_err rc;

    *pmus = NULL;
    *n = 0;
    rc = card_path(card, real, err);
    if (rc != PTL_OK) {
        return rc;
    }
    base = strrchr(real, '/');
    base = base ? base + 1 : real;
    if (!ptl_parse_bdf(base, &dom, &bus, &dev, &fn)) {
        return ptl_set_error(err, PTL_E_NO_CARD, "%s is not a PCI function "
                             "(%s)", card, real);
    }
    list = calloc(MAX_BRIDGES, sizeof(*list));
    if (!list) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    ptl_pmu_dir(dir, sizeof(dir));
    tried[0] = '\0';
    /* every parent that is a PCI function is a bridge; nearest first */
    while ((slash = strrchr(real, '/')) && slash != real &&
           bridges < MAX_BRIDGES) {
        char name[64], path[PATH_MAX + 80];
        struct stat st;

        *slash = '\0';
        base = strrchr(real, '/');
        base = base ? base + 1 : real;
        if (!ptl_parse_bdf(base, &dom, &bus, &dev, &fn)) {
            break;              /* pci0000:00, the host bridge's node */
        }
        bridges++;
        ptl_dwc_pmu_name(dom, bus, (dev << 3) | fn, name, sizeof(name));
        if (tlen < sizeof(tried)) {
            int k = snprintf(tried + tlen, sizeof(tried) - tlen, "%s%s of %s",
                             tlen ? ", " : "", name, base);

            tlen += k > 0 ? (size_t)k : 0;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (stat(path, &st) != 0) {
            continue;
        }
        rc = ptl_pmu_load(path, &list[found], err);
        if (rc != PTL_OK) {
            free(list);
            return rc;
        }
        snprintf(list[found].bridge, sizeof(list[found].bridge), "%.15s", base);
        found++;
    }
    if (!found) {
        free(list);
        if (!bridges) {
            return ptl_set_error(err, PTL_E_PMU, "no DesignWare PMU above %s "
                                 "(it sits on a root bus, with no port above "
                                 "it)", card);
        }
        return ptl_set_error(err, PTL_E_PMU, "no DesignWare PMU above %s (is "
                             "dwc_pcie_pmu loaded? is the port a RAS DES root "
                             "port? looked for %s in %s)", card, tried, dir);
    }
    *pmus = list;
    *n = found;
    return PTL_OK;
}

ptl_err ptl_pci_path_get(const char *card, ptl_pci_path *path,
                         ptl_error *err)
{
    char real[PATH_MAX];
    const char *base;
    char *slash;
    unsigned dom, bus, dev, fn;
    ptl_err rc;

    memset(path, 0, sizeof(*path));
    rc = card_path(card, real, err);
    if (rc != PTL_OK) {
        return rc;
    }
    /* the function, then every parent that is a PCI function: a bridge */
    for (;;) {
        base = strrchr(real, '/');
        base = base ? base + 1 : real;
        if (!ptl_parse_bdf(base, &dom, &bus, &dev, &fn)) {
            break;              /* pci0000:00, the host bridge's node */
        }
        if (path->n == PTL_PCI_PATH_MAX) {
            break;
        }
        snprintf(path->slot[path->n++], sizeof(path->slot[0]),
                 "%04x:%02x:%02x.%x", dom, bus, dev, fn);
        slash = strrchr(real, '/');
        if (!slash || slash == real) {
            break;
        }
        *slash = '\0';
    }
    if (path->n == 0) {
        return ptl_set_error(err, PTL_E_NO_CARD, "%s is not a PCI function "
                             "(%s)", card, real);
    }
    return PTL_OK;
}
