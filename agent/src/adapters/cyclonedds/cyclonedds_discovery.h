// Cyclone DDS's participant of a discovery point (cyclonedds_discovery.cpp).
#pragma once
#include <memory>

#include "core/discovery.h"

namespace mwperf {

// `name`: the adapter's (cyclonedds, cyclonedds11), which starts its messages.
std::unique_ptr<DiscoveryParticipant> make_cyclone_participant(const char* name);

}  // namespace mwperf
