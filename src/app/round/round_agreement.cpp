#include "app/round/round_agreement.hpp"

#include <vector>

namespace bloomshard::app {

RoundAgreement agree(const comm::Communicator& comm, const RoundAgreement& mine) {
  std::vector<std::uint64_t> wire;
  wire.reserve(std::size(kAgreementFields));
  for (const AgreementField& f : kAgreementFields) wire.push_back(mine.*f.member);
  wire = comm.allreduce_sum(wire);
  RoundAgreement all;
  for (std::size_t i = 0; i < wire.size(); ++i) all.*kAgreementFields[i].member = wire[i];
  return all;
}

}  // namespace bloomshard::app
