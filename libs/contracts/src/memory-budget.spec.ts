import { ByteBudget, stringBytes, valueBytes } from './memory-budget';

describe('memory estimates', () => {
  it('weighs a string by its characters, twice as much past Latin-1', () => {
    expect(stringBytes('a'.repeat(100))).toBe(120); // 16-byte header, 8-byte aligned
    expect(stringBytes('é'.repeat(100))).toBe(120);
    expect(stringBytes('€'.repeat(100))).toBe(216);
  });

  it('weighs nested values, and small integers cost only their slot', () => {
    expect(valueBytes({ seq: 1 })).toBe(24 + 8);
    expect(valueBytes({ at: 1.5 })).toBe(24 + 8 + 16);
    expect(valueBytes({ s: new Set(['ab']) })).toBe(24 + 8 + 136 + 8 + 24);
  });
});

describe('ByteBudget', () => {
  it('refuses what does not fit, counts it, and takes back what is released', () => {
    const budget = new ByteBudget('things', 100);
    expect(budget.tryReserve(60)).toBe(true);
    expect(budget.tryReserve(50)).toBe(false);
    expect(budget.memoryUse).toEqual({
      structure: 'things',
      maxBytes: 100,
      bytes: 60,
      entries: 1,
      evictions: 0,
      refusals: 1,
    });
    budget.release(60);
    expect(budget.tryReserve(100)).toBe(true);
    expect(() => new ByteBudget('things', 0)).toThrow(TypeError);
  });
});
