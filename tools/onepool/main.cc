#include <cstdio>
int main() { std::puts("onepool"); return 0; }
