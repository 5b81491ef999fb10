// Fast DDS's participant of a discovery point (fastdds_discovery.cpp).
#pragma once
#include <memory>

#include "core/discovery.h"

namespace mwperf {

std::unique_ptr<DiscoveryParticipant> make_fastdds_participant();

}  // namespace mwperf
