/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The AUX data in a file that `perf record` wrote: its PERF_RECORD_AUXTRACE
 * records carry the trace's bytes right after them, outside their own
 * size. Read forward only (a file as perf record writes it, or perf's
 * pipe mode on standard input), so nothing is seeked and any stream serves.
 * The layout is perf's (tools/perf/Documentation/perf.data-file-format.txt),
 * little endian as the host that recorded it; a file of the other byte
 * order (magic reversed) is refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-telemetry.h"

#define PERF_MAGIC2        0x32454c4946524550ULL    /* "PERFILE2" */
#define PERF_MAGIC2_SWAP   0x50455246494c4532ULL
#define HEADER_PIPE_SIZE   16
#define HEADER_FILE_MIN    56   /* through the data section */
#define REC_AUX            11   /* PERF_RECORD_AUX */
#define REC_AUXTRACE_INFO  70
#define REC_AUXTRACE       71
#define AUXTRACE_REC_SIZE  48   /* header, size, offset, ref, idx, tid, cpu */
#define AUX_FLAG_TRUNCATED 0x01
#define AUX_FLAG_PARTIAL   0x04

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--) {
        v = v << 8 | p[i];
    }
    return v;
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

bool ptl_perf_data_magic(const void *head, size_t len)
{
    return len >= 8 && get_u64(head) == PERF_MAGIC2;
}

/* The file, after the bytes the caller has already read of it. */
typedef struct reader {
    FILE *f;
    const uint8_t *head;
    size_t head_len;
    uint64_t pos;
} reader;

/* up to n bytes into buf (NULL: skipped); how many there were */
static size_t take_some(reader *r, uint8_t *buf, size_t n)
{
    uint8_t scratch[4096];
    size_t k = n, got;

    if (r->head_len > 0) {
        k = n < r->head_len ? n : r->head_len;
        if (buf) {
            memcpy(buf, r->head, k);
        }
        r->head += k;
        r->head_len -= k;
        r->pos += k;
        return k;
    }
    if (!buf && k > sizeof(scratch)) {
        k = sizeof(scratch);
    }
    got = fread(buf ? buf : scratch, 1, k, r->f);
    r->pos += got;
    return got;
}

/* n bytes into buf (NULL: skipped); false at an early end */
static bool take(reader *r, uint8_t *buf, uint64_t n)
{
    while (n > 0) {
        size_t k = n > (1u << 20) ? (1u << 20) : (size_t)n;
        size_t got = take_some(r, buf, k);

        if (got == 0) {
            return false;
        }
        if (buf) {
            buf += got;
        }
        n -= got;
    }
    return true;
}

static ptl_err cut_short(reader *r, const char *name, ptl_error *err)
{
    if (ferror(r->f)) {
        return ptl_set_error(err, PTL_E_INTERNAL, "%s: %s", name,
                             strerror(errno));
    }
    return ptl_set_error(err, PTL_E_USAGE, "%s: a perf.data file cut short "
                         "at byte %llu", name, (unsigned long long)r->pos);
}

ptl_err ptl_perf_data_aux(FILE *f, const void *head, size_t head_len,
                          const char *name, ptl_ptt_sink sink, void *opaque,
                          ptl_perf_data_info *info, ptl_error *err)
{
    static uint8_t chunk[1 << 16];
    uint8_t hdr[HEADER_FILE_MIN], rec[AUXTRACE_REC_SIZE];
    reader rd = { f, head, head_len, 0 }, *r = &rd;
    uint64_t start, end, hsize;

    memset(info, 0, sizeof(*info));
    if (!take(r, hdr, HEADER_PIPE_SIZE)) {
        return cut_short(r, name, err);
    }
    if (get_u64(hdr) == PERF_MAGIC2_SWAP) {
        return ptl_set_error(err, PTL_E_USAGE, "%s: a perf.data file of the "
                             "other byte order", name);
    }
    if (get_u64(hdr) != PERF_MAGIC2) {
        return ptl_set_error(err, PTL_E_USAGE, "%s: not a perf.data file "
                             "(no PERFILE2 magic)", name);
    }
    hsize = get_u64(hdr + 8);
    if (hsize == HEADER_PIPE_SIZE) {
        /* pipe mode: the records follow to the end */
        start = r->pos;
        end = UINT64_MAX;
    } else if (hsize >= HEADER_FILE_MIN) {
        /* magic, size, attr_size, attrs {offset, size}, data {offset, size} */
        if (!take(r, hdr + HEADER_PIPE_SIZE,
                  HEADER_FILE_MIN - HEADER_PIPE_SIZE)) {
            return cut_short(r, name, err);
        }
        start = get_u64(hdr + 40);
        end = start + get_u64(hdr + 48);
        if (start < r->pos || end < start) {
            return ptl_set_error(err, PTL_E_USAGE, "%s: its data section "
                                 "(at %llu) is not after its header", name,
                                 (unsigned long long)start);
        }
        if (!take(r, NULL, start - r->pos)) {
            return cut_short(r, name, err);
        }
    } else {
        return ptl_set_error(err, PTL_E_USAGE, "%s: a perf.data header of "
                             "%llu bytes", name, (unsigned long long)hsize);
    }

    while (r->pos < end) {
        uint32_t type;
        uint16_t size;
        size_t got = take_some(r, rec, 8);

        if (got == 0 && end == UINT64_MAX && !ferror(f)) {
            break;                      /* a pipe's end */
        }
        if (got < 8 && !take(r, rec + got, 8 - got)) {
            return cut_short(r, name, err);
        }
        type = get_u32(rec);
        size = (uint16_t)(rec[6] | rec[7] << 8);
        if (size < 8) {
            return ptl_set_error(err, PTL_E_USAGE, "%s: a record of %u bytes "
                                 "at byte %llu", name, size,
                                 (unsigned long long)(r->pos - 8));
        }
        if (type == REC_AUXTRACE && size >= AUXTRACE_REC_SIZE) {
            uint64_t len;

            if (!take(r, rec + 8, AUXTRACE_REC_SIZE - 8) ||
                !take(r, NULL, size - AUXTRACE_REC_SIZE)) {
                return cut_short(r, name, err);
            }
            len = get_u64(rec + 8);
            info->auxtrace_records++;
            info->aux_bytes += len;
            while (len > 0) {
                size_t k = len > sizeof(chunk) ? sizeof(chunk) : (size_t)len;

                if (!take(r, chunk, k)) {
                    return cut_short(r, name, err);
                }
                if (sink(opaque, chunk, k)) {
                    return ptl_set_error(err, PTL_E_INTERNAL, "%s: %s", name,
                                         strerror(errno));
                }
                len -= k;
            }
        } else if (type == REC_AUX && size >= 32) {
            /* header, aux_offset, aux_size, flags */
            uint8_t body[24];

            if (!take(r, body, 24) || !take(r, NULL, size - 32)) {
                return cut_short(r, name, err);
            }
            info->aux_truncated += !!(get_u64(body + 16) & AUX_FLAG_TRUNCATED);
            info->aux_partial += !!(get_u64(body + 16) & AUX_FLAG_PARTIAL);
        } else if (type == REC_AUXTRACE_INFO && size >= 24) {
            /* header, type, reserved, priv[0] (hisi_ptt: the PMU type) */
            uint8_t body[16];

            if (!take(r, body, 16) || !take(r, NULL, size - 24)) {
                return cut_short(r, name, err);
            }
            info->auxtrace_type = get_u32(body);
            info->pmu_type = get_u64(body + 8);
        } else if (!take(r, NULL, size - 8)) {
            return cut_short(r, name, err);
        }
    }
    return PTL_OK;
}
