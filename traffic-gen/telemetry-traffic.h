/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QOM face of the traffic generators: an abstract user-creatable type
 * "telemetry-traffic" and, for every model of ptm-gen.h, a type
 * "telemetry-traffic-<model>" whose properties are the model's parameters.
 * A card takes one through its "traffic" link.
 */
#ifndef TELEMETRY_TRAFFIC_H
#define TELEMETRY_TRAFFIC_H

#include "qom/object.h"
#include "ptm-gen.h"

#define TYPE_TELEMETRY_TRAFFIC "telemetry-traffic"
OBJECT_DECLARE_TYPE(TelemetryTraffic, TelemetryTrafficClass, TELEMETRY_TRAFFIC)

/*
 * Called by a generator before a live parameter change: the card brings
 * its model up to the present (*now_ns) and says from when the change
 * applies (*from, the PCIe cycle that starts its next PCIe drain window).
 */
typedef void TelemetryTrafficSync(void *card, uint64_t *now_ns,
                                  uint64_t *from);

struct TelemetryTraffic {
    Object parent_obj;
    void *params;               /* the parameters while no card runs it */
    PtmGen *gen;                /* while a card runs it */
    TelemetryTrafficSync *sync;
    void *card;
};

struct TelemetryTrafficClass {
    ObjectClass parent_class;
    const PtmGenModel *model;
};

/* Bind to a card; returns the ops for its core and *opaque for them. */
const PtmSourceOps *telemetry_traffic_attach(TelemetryTraffic *t,
                                             const PtmGeometry *geo,
                                             TelemetryTrafficSync *sync,
                                             void *card, void **opaque,
                                             Error **errp);
void telemetry_traffic_detach(TelemetryTraffic *t);
/* Migration of the parameter history (part of the card's state). */
void *telemetry_traffic_save(TelemetryTraffic *t, size_t *len);
char *telemetry_traffic_load(TelemetryTraffic *t, const void *buf,
                             size_t len);

#endif
