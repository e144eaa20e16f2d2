/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HiSilicon PCIe Tune and Trace, the recording: one AUX-area perf event
 * on the PTT's PMU, its ring and AUX area mapped, the AUX data that the
 * ring's PERF_RECORD_AUX records announce handed out in order. This is
 * the only part of the trace reader that needs the device; the decoding
 * is ptl-ptt.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "pcie-telemetry.h"

#define RING_DATA_PAGES  16     /* 2^4: room for many PERF_RECORD_AUX */
#define MLOCK_FILE       "/proc/sys/kernel/perf_event_mlock_kb"

struct ptl_ptt_trace {
    int fd;
    char label[80];             /* "hisi_ptt2_1" for messages */
    int cpu;
    size_t page;
    struct perf_event_mmap_page *mp;
    size_t ring_len;            /* 1 + RING_DATA_PAGES pages */
    uint8_t *aux;
    size_t aux_len;
    uint64_t truncated, partial, lost;
};

static ptl_err open_error(const char *label, int cpu, int e, ptl_error *err)
{
    switch (e) {
    case EACCES:
    case EPERM: {
        int level = ptl_perf_paranoid();

        return ptl_set_error(err, PTL_E_PERM, "tracing with %s was refused "
                             "(%s): needs root or CAP_PERFMON; "
                             "/proc/sys/kernel/perf_event_paranoid is %d",
                             label, strerror(e), level);
    }
    case EBUSY:
        return ptl_set_error(err, PTL_E_BUSY, "%s is tracing for another "
                             "perf event (%s): the PTT takes one trace at a "
                             "time; try again when it ends", label,
                             strerror(e));
    case ENOENT:
    case ENODEV:
        return ptl_set_error(err, PTL_E_PMU, "%s: no such PMU or its CPU is "
                             "gone (%s): is hisi_ptt still loaded?", label,
                             strerror(e));
    case EMFILE:
    case ENFILE:
        return ptl_set_error(err, PTL_E_INTERNAL, "%s: %s", label,
                             strerror(e));
    default:
        return ptl_set_error(err, PTL_E_PMU, "%s refused the trace on CPU %d "
                             "(%s): a filter, direction, type or format it "
                             "does not take, or a CPU that is offline?",
                             label, cpu, strerror(e));
    }
}

/* Smallest power of two pages holding at least bytes. */
static size_t pow2_pages(size_t bytes, size_t page)
{
    size_t n = page;

    while (n < bytes) {
        n <<= 1;
    }
    return n;
}

ptl_err ptl_ptt_trace_open(const ptl_pmu *pmu,
                           const uint64_t config[PTL_PMU_CONFIG_WORDS],
                           size_t aux_bytes, ptl_ptt_trace **out,
                           ptl_error *err)
{
    struct perf_event_attr attr;
    ptl_ptt_trace *t;
    long fd;
    void *m;

    *out = NULL;
    t = calloc(1, sizeof(*t));
    if (!t) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    t->fd = -1;
    snprintf(t->label, sizeof(t->label), "%s", pmu->name);
    t->cpu = pmu->cpu;
    t->page = (size_t)sysconf(_SC_PAGESIZE);
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = pmu->type;
    attr.config = config[0];
    attr.config1 = config[1];
    attr.config2 = config[2];
    /* created disabled; no exclude bits: the PMU takes none */
    attr.disabled = 1;
    fd = syscall(SYS_perf_event_open, &attr, -1, pmu->cpu, -1,
                 PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        ptl_err rc = open_error(t->label, pmu->cpu, errno, err);

        free(t);
        return rc;
    }
    t->fd = (int)fd;

    /* the ring, writable: we give its space back through data_tail */
    t->ring_len = (1 + RING_DATA_PAGES) * t->page;
    m = mmap(NULL, t->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;

        ptl_ptt_trace_close(t);
        return ptl_set_error(err, e == EPERM ? PTL_E_PERM : PTL_E_INTERNAL,
                             "%s: cannot map the event's ring: %s",
                             pmu->name, strerror(e));
    }
    t->mp = m;

    /* the AUX area after it; writable: not snapshot (overwrite) mode */
    t->aux_len = pow2_pages(aux_bytes < PTL_PTT_AUX_MIN ? PTL_PTT_AUX_MIN
                                                        : aux_bytes, t->page);
    t->mp->aux_offset = t->ring_len;
    t->mp->aux_size = t->aux_len;
    m = mmap(NULL, t->aux_len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd,
             (off_t)t->ring_len);
    if (m == MAP_FAILED) {
        int e = errno;

        ptl_ptt_trace_close(t);
        if (e == EPERM) {
            return ptl_set_error(err, PTL_E_PERM, "%s: mapping an AUX area "
                                 "of %zu MiB was refused: over what "
                                 MLOCK_FILE " lets a user lock; run as root "
                                 "or raise it", pmu->name,
                                 t->aux_len >> 20);
        }
        return ptl_set_error(err, e == ENOMEM ? PTL_E_INTERNAL : PTL_E_PMU,
                             "%s: cannot map an AUX area of %zu MiB: %s",
                             pmu->name, t->aux_len >> 20, strerror(e));
    }
    t->aux = m;
    *out = t;
    return PTL_OK;
}

ptl_err ptl_ptt_trace_enable(ptl_ptt_trace *t, ptl_error *err)
{
    if (ioctl(t->fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        return open_error(t->label, t->cpu, errno, err);
    }
    return PTL_OK;
}

ptl_err ptl_ptt_trace_disable(ptl_ptt_trace *t, ptl_error *err)
{
    if (ioctl(t->fd, PERF_EVENT_IOC_DISABLE, 0) != 0) {
        return open_error(t->label, t->cpu, errno, err);
    }
    return PTL_OK;
}

/* len bytes at offset off of a circular area of size bytes */
static void ring_copy(const uint8_t *area, size_t size, uint64_t off,
                      void *dst, size_t len)
{
    size_t at = (size_t)(off % size);
    size_t first = len < size - at ? len : size - at;

    memcpy(dst, area + at, first);
    memcpy((uint8_t *)dst + first, area, len - first);
}

ptl_err ptl_ptt_trace_drain(ptl_ptt_trace *t, ptl_ptt_sink sink,
                            void *opaque, ptl_error *err)
{
    const uint8_t *data = (const uint8_t *)t->mp + t->mp->data_offset;
    uint64_t size = t->mp->data_size;
    /* acquire: the records below data_head are complete */
    uint64_t head = __atomic_load_n(&t->mp->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = t->mp->data_tail;

    while (tail < head) {
        struct perf_event_header h;
        union {
            struct {
                struct perf_event_header h;
                uint64_t offset, size, flags;
            } aux;
            uint8_t bytes[64];
        } rec;

        ring_copy(data, size, tail, &h, sizeof(h));
        if (h.size < sizeof(h) || h.size > head - tail) {
            return ptl_set_error(err, PTL_E_PMU, "%s: a broken record in the "
                                 "ring (size %u)", t->label, h.size);
        }
        if (h.type == PERF_RECORD_AUX && h.size >= sizeof(rec.aux)) {
            uint64_t off, len;

            ring_copy(data, size, tail, &rec, sizeof(rec.aux));
            off = rec.aux.offset;
            len = rec.aux.size;
            t->truncated += !!(rec.aux.flags & PERF_AUX_FLAG_TRUNCATED);
            t->partial += !!(rec.aux.flags & PERF_AUX_FLAG_PARTIAL);
            /* the data may wrap around the end of the area: two pieces */
            while (len > 0) {
                size_t at = (size_t)(off % t->aux_len);
                size_t n = len < t->aux_len - at ? (size_t)len
                                                 : t->aux_len - at;

                if (sink(opaque, t->aux + at, n) != 0) {
                    int e = errno;

                    return ptl_set_error(err, PTL_E_INTERNAL, "%s: cannot "
                                         "keep the trace data: %s", t->label,
                                         strerror(e));
                }
                off += n;
                len -= n;
            }
            /* release: the data is read before the kernel writes there */
            __atomic_store_n(&t->mp->aux_tail,
                             rec.aux.offset + rec.aux.size, __ATOMIC_RELEASE);
        } else if (h.type == PERF_RECORD_LOST) {
            t->lost++;
        }
        tail += h.size;
    }
    __atomic_store_n(&t->mp->data_tail, tail, __ATOMIC_RELEASE);
    return PTL_OK;
}

void ptl_ptt_trace_flags(const ptl_ptt_trace *t, uint64_t *truncated,
                         uint64_t *partial)
{
    /* a lost AUX record loses its data as a truncation does */
    *truncated = t->truncated + t->lost;
    *partial = t->partial;
}

void ptl_ptt_trace_close(ptl_ptt_trace *t)
{
    if (!t) {
        return;
    }
    if (t->aux) {
        munmap(t->aux, t->aux_len);
    }
    if (t->mp) {
        munmap(t->mp, t->ring_len);
    }
    if (t->fd >= 0) {
        close(t->fd);
    }
    free(t);
}
