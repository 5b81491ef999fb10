// ROS 2's participant of a discovery point (ros2_discovery.cpp).
#pragma once
#include <memory>
#include <string>

#include "core/discovery.h"

namespace mwperf {

// `name`: the adapter (ros2, ros2-kilted); `version`: what its version() says;
// `rmw`: the rmw rcl runs on.
std::unique_ptr<DiscoveryParticipant> make_ros2_participant(const std::string& name, const std::string& version,
                                                            const std::string& rmw);

}  // namespace mwperf
