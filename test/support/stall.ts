/** Blocks this process's event loop, as a busy host or a long GC pause does. */
export function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: nothing else of this process runs meanwhile
  }
}
