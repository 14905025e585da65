#pragma once
// Helpers shared by the peer translation units (not part of the peer interface).
#include <peers/peer.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace liembs::peers::detail {

// The coordinate order of liembs::import_urdf_string for a URDF: the movable joints in
// order, and the rank of every joint of the model (fixed ones too) in that order, used to
// order the children of a link.
struct UrdfOrder {
  std::vector<std::string> movable_joints;
  std::map<std::string, std::size_t> joint_rank;

  std::size_t rank(const std::string& joint) const {
    const auto found = joint_rank.find(joint);
    return found == joint_rank.end() ? joint_rank.size() : found->second;
  }
};

UrdfOrder urdf_order(const std::string& urdf, bool floating_base);

// Number of movable joints of a peer.
inline int joint_count(const PeerModel& peer) { return peer.dof() - (peer.floating_base() ? 6 : 0); }

}  // namespace liembs::peers::detail
