// The whole of stdin, for the emulator harnesses (each reads its inputs this way).
#pragma once
#include <cstdio>
#include <vector>

static std::vector<unsigned char> read_all() {
  std::vector<unsigned char> in;
  unsigned char buf[65536];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, stdin)) > 0) in.insert(in.end(), buf, buf + k);
  return in;
}
