// D35: a sandbox operator's powers (sandboxSeeds at launch, ten times the rate limits) are in
// effect only on a deployment where sandbox is enabled (SANDBOX_ENABLED; off by default with
// NODE_ENV=production): a flag copied into a real-money database grants nothing there.
export const sandboxInEffect = (operator: { sandbox: boolean }, config: { sandboxEnabled: boolean }): boolean =>
  operator.sandbox && config.sandboxEnabled;
