// ROS 1's participant of a discovery point (ros1_discovery.cpp).
#pragma once
#include <memory>

#include "core/discovery.h"

namespace mwperf {

std::unique_ptr<DiscoveryParticipant> make_ros1_participant();

}  // namespace mwperf
