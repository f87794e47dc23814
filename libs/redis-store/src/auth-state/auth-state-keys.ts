/**
 * Keys of the shared auth state. Each script touches one key, and each key carries its
 * own hash tag, so everything works unchanged on Redis Cluster
 * (https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags).
 * Subjects and ticket ids are embedded as they are: the fixed text around them keeps the
 * keys distinct, and no script ever needs two of them in one slot.
 */
export interface AuthStateKeys {
  /** String: one stream ticket (its entry as JSON), expiring with the ticket. */
  ticket(ticket: string): string;
  /** String: a subject's unredeemed tickets, expiring with its last ticket. */
  ticketCount(subject: string): string;
  /** Hash: a subject's open streams, `n:<instance>` count and `u:<instance>` lease end. */
  connections(subject: string): string;
  /** String: hits in the current rate window of one throttler key. */
  rateHits(throttlerKey: string): string;
  /** String: present while that throttler key is blocked. */
  rateBlock(throttlerKey: string): string;
}

export function authStateKeys(prefix: string): AuthStateKeys {
  if (/[{}\s]/.test(prefix)) {
    throw new TypeError(`key prefix ${JSON.stringify(prefix)} must not contain braces or spaces`);
  }
  return {
    ticket: (ticket) => `${prefix}:ticket:{${ticket}}`,
    ticketCount: (subject) => `${prefix}:tickets:{${subject}}`,
    connections: (subject) => `${prefix}:conns:{${subject}}`,
    // Both keys of one throttler key share its hash tag: the rate script uses the two.
    rateHits: (key) => `${prefix}:rate:{${key}}:hits`,
    rateBlock: (key) => `${prefix}:rate:{${key}}:block`,
  };
}
