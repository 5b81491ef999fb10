// iceoryx's participant of a discovery point (iceoryx_discovery.cpp).
#pragma once
#include <memory>

#include "core/discovery.h"

namespace mwperf {

std::unique_ptr<DiscoveryParticipant> make_iceoryx_participant();

}  // namespace mwperf
