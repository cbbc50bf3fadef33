#include "tuner/service/claim_registry.h"

#include <algorithm>

namespace lathe::service {

void ClaimRegistry::Join(const std::string& workload_key,
                         const std::string& target) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++tasks_[{workload_key, target}].joined;
}

void ClaimRegistry::Leave(const std::string& workload_key,
                          const std::string& target) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = tasks_.find({workload_key, target});
  if (it == tasks_.end()) return;
  // The last run of the task gone: what its runs measured is committed,
  // and a run that joins later reads it from the database.
  if (--it->second.joined <= 0) tasks_.erase(it);
}

bool ClaimRegistry::Claim(const std::string& workload_key,
                          const std::string& target, const void* run,
                          const std::vector<std::string>& hashes) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = tasks_.find({workload_key, target});
  if (it == tasks_.end()) return true;
  Task& task = it->second;
  for (const std::string& hash : hashes) {
    auto held = task.holder.find(hash);
    if (held != task.holder.end() && held->second != run) return false;
  }
  for (const std::string& hash : hashes) {
    if (task.holder.emplace(hash, run).second) task.claimed.push_back(hash);
  }
  return true;
}

void ClaimRegistry::Release(const std::string& workload_key,
                            const std::string& target, const void* run,
                            const std::vector<std::string>& hashes) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = tasks_.find({workload_key, target});
  if (it == tasks_.end()) return;
  for (const std::string& hash : hashes) {
    auto held = it->second.holder.find(hash);
    if (held != it->second.holder.end() && held->second == run)
      it->second.holder.erase(held);
  }
}

void ClaimRegistry::Claimed(const std::string& workload_key,
                            const std::string& target, int64_t* cursor,
                            absl::flat_hash_set<std::string>& into) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = tasks_.find({workload_key, target});
  if (it == tasks_.end()) return;
  const std::vector<std::string>& claimed = it->second.claimed;
  for (size_t i = static_cast<size_t>(std::max<int64_t>(0, *cursor));
       i < claimed.size(); ++i) {
    into.insert(claimed[i]);
  }
  *cursor = static_cast<int64_t>(claimed.size());
}

absl::Status ClaimRegistry::SaveModel(
    const std::string& target, const std::string& name, int64_t trained_through,
    const std::function<absl::Status()>& save) {
  std::lock_guard<std::mutex> lock(save_mutex_);
  auto it = saved_through_.find({target, name});
  if (it != saved_through_.end() && it->second > trained_through)
    return absl::OkStatus();  // the stored model knows these records already
  absl::Status saved = save();
  if (saved.ok()) saved_through_[{target, name}] = trained_through;
  return saved;
}

int64_t ClaimRegistry::tasks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(tasks_.size());
}

int64_t ClaimRegistry::claims() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t n = 0;
  for (const auto& [key, task] : tasks_)
    n += static_cast<int64_t>(task.holder.size());
  return n;
}

}  // namespace lathe::service
