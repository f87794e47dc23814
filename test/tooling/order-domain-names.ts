/**
 * Names only the order domain uses (its statuses, kinds, event types and the load test's
 * old filler): the engine check looks for them in the engine, the removal count in
 * everything a team would delete or rewrite to drop orders (docs/adapting.md).
 */
export const ORDER_DOMAIN_NAMES =
  /out_for_delivery|'delivered'|'shipped'|'cancelled'|'tracking'|isTerminalStatus|TrackingUpdated|OrderStatusChanged|OrderStatus\b|paddingBytes/;
