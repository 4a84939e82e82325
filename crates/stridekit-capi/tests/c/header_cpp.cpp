// The header must compile as C++17 with -Wall -Werror (tests/c_api.rs checks it).
#include "stridekit.h"
int main() {
    sk_view v{};
    uint32_t major = 0;
    return sk_version(&major, nullptr, nullptr) == SK_OK && v.owner == nullptr ? 0 : 1;
}
