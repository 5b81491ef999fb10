// zenoh's participant of a discovery point (zenoh_discovery.cpp).
#pragma once
#include <memory>

#include "core/discovery.h"

namespace mwperf {

std::unique_ptr<DiscoveryParticipant> make_zenoh_participant();

}  // namespace mwperf
