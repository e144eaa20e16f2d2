/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QOM types of the traffic sources.
 *
 *   -object telemetry-traffic-pattern,id=t0,rq-frame-bytes=256,...
 *   -device ndk-pcie-telemetry,traffic=t0
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/module.h"
#include "qom/object_interfaces.h"

#include "telemetry-traffic.h"
#include "ptm-pattern.h"

const PtmSourceOps *telemetry_traffic_attach(TelemetryTraffic *t,
                                             const PtmGeometry *geo,
                                             void **opaque, Error **errp)
{
    TelemetryTrafficClass *tc = TELEMETRY_TRAFFIC_GET_CLASS(t);
    const PtmSourceOps *ops;

    if (t->attached) {
        error_setg(errp, "traffic object '%s' already drives another card",
                   object_get_canonical_path_component(OBJECT(t)));
        return NULL;
    }
    ops = tc->attach(t, geo, opaque, errp);
    if (ops) {
        t->attached = true;
    }
    return ops;
}

void telemetry_traffic_detach(TelemetryTraffic *t)
{
    t->attached = false;
}

static const TypeInfo telemetry_traffic_info = {
    .name = TYPE_TELEMETRY_TRAFFIC,
    .parent = TYPE_OBJECT,
    .abstract = true,
    .instance_size = sizeof(TelemetryTraffic),
    .class_size = sizeof(TelemetryTrafficClass),
    .interfaces = (InterfaceInfo[]) {
        { TYPE_USER_CREATABLE },
        { }
    },
};

/* ---------------------------------------------------------------- pattern */

#define TYPE_TELEMETRY_TRAFFIC_PATTERN "telemetry-traffic-pattern"
OBJECT_DECLARE_SIMPLE_TYPE(TelemetryTrafficPattern, TELEMETRY_TRAFFIC_PATTERN)

struct TelemetryTrafficPattern {
    TelemetryTraffic parent_obj;
    PtmPattern pat;
};

typedef enum { P_BOOL, P_U32, P_I32 } ParamType;

typedef struct PatternParam {
    const char *name;
    size_t offset;              /* in PtmPatternParams */
    ParamType type;
    int64_t min, max;
    const char *desc;
} PatternParam;

#define OFF(f) offsetof(PtmPatternParams, f)
#define FRAME(nm, kind)                                                     \
    { #nm "-frame-bytes", OFF(bus[kind].frame_bytes), P_U32, 0, 65536,      \
      "bytes of each frame on the " #nm " bus (0: idle)" }
#define GAP(nm, kind)                                                       \
    { #nm "-gap", OFF(bus[kind].gap), P_U32, 0, 65536,                       \
      "idle cycles after each frame on the " #nm " bus" }
#define STALL(nm, kind)                                                     \
    { #nm "-stall", OFF(bus[kind].stall), P_U32, 0, 65536,                   \
      "cycles the first word of each frame waits on the " #nm " bus" }

static const PatternParam pattern_params[] = {
    { "link-up", OFF(link_up), P_BOOL, 0, 1, "PCIe link up" },
    { "tags-free", OFF(tags_free), P_I32, -1, 2047,
      "free PCIe tags (-1: the card's tag capacity)" },
    { "stfifo-free", OFF(stfifo_free), P_I32, -1, 65535,
      "free storage FIFO words (-1: the card's capacity)" },
    { "brake", OFF(brake), P_U32, 0, 0x3f,
      "BRAKE bits held active all the time (bit k = reason k)" },
    FRAME(rq, PTM_BUS_RQ), GAP(rq, PTM_BUS_RQ), STALL(rq, PTM_BUS_RQ),
    FRAME(rc, PTM_BUS_RC), GAP(rc, PTM_BUS_RC), STALL(rc, PTM_BUS_RC),
    FRAME(up, PTM_BUS_UP), GAP(up, PTM_BUS_UP), STALL(up, PTM_BUS_UP),
    FRAME(down, PTM_BUS_DOWN), GAP(down, PTM_BUS_DOWN),
    STALL(down, PTM_BUS_DOWN),
};

static void pattern_prop_get(Object *obj, Visitor *v, const char *name,
                             void *opaque, Error **errp)
{
    const PatternParam *pp = opaque;
    void *field = (char *)&TELEMETRY_TRAFFIC_PATTERN(obj)->pat.par +
                  pp->offset;

    switch (pp->type) {
    case P_BOOL:
        visit_type_bool(v, name, field, errp);
        break;
    case P_U32:
        visit_type_uint32(v, name, field, errp);
        break;
    case P_I32:
        visit_type_int32(v, name, field, errp);
        break;
    }
}

static void pattern_prop_set(Object *obj, Visitor *v, const char *name,
                             void *opaque, Error **errp)
{
    const PatternParam *pp = opaque;
    void *field = (char *)&TELEMETRY_TRAFFIC_PATTERN(obj)->pat.par +
                  pp->offset;
    bool b;
    uint32_t u;
    int32_t i;

    switch (pp->type) {
    case P_BOOL:
        if (visit_type_bool(v, name, &b, errp)) {
            *(bool *)field = b;
        }
        return;
    case P_U32:
        if (!visit_type_uint32(v, name, &u, errp)) {
            return;
        }
        if (u > pp->max) {
            error_setg(errp, "%s is %u, allowed: %" PRId64 " to %" PRId64,
                       name, u, pp->min, pp->max);
            return;
        }
        *(uint32_t *)field = u;
        return;
    case P_I32:
        if (!visit_type_int32(v, name, &i, errp)) {
            return;
        }
        if (i < pp->min || i > pp->max) {
            error_setg(errp, "%s is %d, allowed: %" PRId64 " to %" PRId64,
                       name, i, pp->min, pp->max);
            return;
        }
        *(int32_t *)field = i;
        return;
    }
}

static const PtmSourceOps *pattern_attach(TelemetryTraffic *t,
                                          const PtmGeometry *geo,
                                          void **opaque, Error **errp)
{
    TelemetryTrafficPattern *p = TELEMETRY_TRAFFIC_PATTERN(t);
    g_autofree char *err = ptm_pattern_check(&p->pat.par, geo);

    if (err) {
        error_setg(errp, "%s", err);
        return NULL;
    }
    p->pat.geo = *geo;
    *opaque = &p->pat;
    return &ptm_pattern_ops;
}

static void pattern_instance_init(Object *obj)
{
    ptm_pattern_params_default(&TELEMETRY_TRAFFIC_PATTERN(obj)->pat.par);
}

static void pattern_class_init(ObjectClass *oc, void *data)
{
    TelemetryTrafficClass *tc = TELEMETRY_TRAFFIC_CLASS(oc);

    tc->attach = pattern_attach;
    for (size_t i = 0; i < ARRAY_SIZE(pattern_params); i++) {
        const PatternParam *pp = &pattern_params[i];
        static const char *const type_name[] = { "bool", "uint32", "int32" };

        object_class_property_add(oc, pp->name, type_name[pp->type],
                                  pattern_prop_get, pattern_prop_set,
                                  NULL, (void *)pp);
        object_class_property_set_description(oc, pp->name, pp->desc);
    }
}

static const TypeInfo telemetry_traffic_pattern_info = {
    .name = TYPE_TELEMETRY_TRAFFIC_PATTERN,
    .parent = TYPE_TELEMETRY_TRAFFIC,
    .instance_size = sizeof(TelemetryTrafficPattern),
    .instance_init = pattern_instance_init,
    .class_init = pattern_class_init,
};

static void telemetry_traffic_register_types(void)
{
    type_register_static(&telemetry_traffic_info);
    type_register_static(&telemetry_traffic_pattern_info);
}

type_init(telemetry_traffic_register_types)
