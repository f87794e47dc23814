// @ts-check
/**
 * The Nest CLI's rspack build with one change: SWC emits ES2022, the level tsconfig.json
 * type-checks against and every supported Node (>= 20.19) runs natively. The CLI's
 * default (es2021) turns each class field into a `_define_property()` call (an `in` walk
 * up the prototype chain, then `Object.defineProperty`) in every constructor: objects
 * made per request, per subscription and per event (a poll, a bus subscriber, a
 * tracking update) paid for it on the hot paths (2-3 % of a long-poll CPU profile).
 * Native fields keep the same semantics, [[Define]] as tsconfig's ES2022 target has.
 *
 * @param {import('@rspack/core').Configuration} defaults the CLI's configuration
 * @returns {import('@rspack/core').Configuration}
 */
module.exports = (defaults) => {
  const rules = defaults.module?.rules ?? [];
  let patched = 0;
  for (const rule of rules) {
    if (!rule || typeof rule !== 'object' || !Array.isArray(rule.use)) continue;
    for (const use of rule.use) {
      if (use && typeof use === 'object' && use.loader === 'builtin:swc-loader') {
        const options = /** @type {{ jsc: { target?: string } }} */ (use.options);
        options.jsc.target = 'es2022';
        patched++;
      }
    }
  }
  // Fail the build rather than silently ship the default if the CLI changes its rules.
  if (patched !== 1) throw new Error(`rspack.config.js: expected one swc-loader, found ${patched}`);
  return defaults;
};
