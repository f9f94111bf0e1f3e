import { expect } from 'chai';
import path from 'node:path';
import ts from 'typescript';

// The player channel's messages are one map (src/shared/domain/player-channel.ts, D4): the emitter
// every role sends through and the page's scripts (plain JavaScript, checked through JSDoc by
// src/realtime/page/tsconfig.json) are type-checked against it, so that a message name or a
// field the map does not have fails `npm run typecheck`, not a player's game.

type Edit = { from: string; to: string };

// the unchanged files (the DOM's and Node's types above all) are parsed once for all the checks
const parsed = new Map<string, ts.SourceFile | undefined>();

function diagnostics(options: ts.CompilerOptions, rootNames: string[], replaced: Map<string, (text: string) => string>): string[] {
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => replaced.has(path.resolve(file)) || fileExists(file);
  host.getSourceFile = (file, language, ...rest) => {
    const edit = replaced.get(path.resolve(file));
    if (!edit) {
      const key = `${language === undefined ? '' : typeof language === 'object' ? language.languageVersion : language}:${path.resolve(file)}`;
      if (!parsed.has(key)) parsed.set(key, getSourceFile(file, language, ...rest));
      return parsed.get(key);
    }
    const original = ts.sys.fileExists(file) ? ts.sys.readFile(file)! : '';
    return ts.createSourceFile(file, edit(original), language);
  };
  const program = ts.createProgram(rootNames, options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

function parsedConfig(file: string): ts.ParsedCommandLine {
  const config = ts.getParsedCommandLineOfConfigFile(path.resolve(file), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  expect(config, `${file} is a TypeScript project`).to.not.equal(undefined);
  return config!;
}

const replacing = (edit: Edit | undefined) => (text: string) => {
  if (!edit) return text;
  expect(text).to.include(edit.from);
  return text.replace(edit.from, edit.to);
};

describe('the player channel is typed (D4)', function () {
  // a type check of the page, or of the emitter with its imports, takes seconds
  this.timeout(120_000);

  describe('the page (src/realtime/page/game.js)', () => {
    const GAME = path.resolve('src/realtime/page/game.js');
    const pageErrors = (edit?: Edit) => {
      const config = parsedConfig('src/realtime/page/tsconfig.json');
      expect(config.fileNames.map((f) => path.resolve(f))).to.include(GAME);
      return diagnostics(config.options, config.fileNames, new Map([[GAME, replacing(edit)]]));
    };

    it('type-checks against the map as it is', () => {
      expect(pageErrors()).to.deep.equal([]);
    });

    it('a message name the map does not have fails', () => {
      const errors = pageErrors({ from: "on('round_state', (msg) => setRound(msg));", to: "on('round_stat', (msg) => setRound(msg));" });
      expect(errors.join('\n')).to.include('"round_stat"');
    });

    it('a field a message does not carry fails', () => {
      const errors = pageErrors({ from: 'payoutMicro: msg.payoutMicro }', to: 'payoutMicro: msg.payout }' });
      expect(errors.join('\n')).to.include("Property 'payout' does not exist");
    });

    it('a place_bet payload with a field the map does not have fails', () => {
      const errors = pageErrors({ from: '{ side, amountMicro: amountMicro.toString(), clientBetId }', to: '{ side, amount: amountMicro.toString(), clientBetId }' });
      expect(errors.join('\n')).to.include("'amount' does not exist");
    });
  });

  describe('the emitter (src/shared/game/players/emitter.ts)', () => {
    // a probe of the emitter's API, compiled with the service's own options
    const PROBE = path.resolve('test/unit/player-channel-probe.ts');
    const emitterErrors = (send: string) => {
      const config = parsedConfig('tsconfig.json');
      const probe = `import type { PlayerEmitter } from '../../src/shared/game/players/emitter.js';\ndeclare const emitter: PlayerEmitter;\n${send}\n`;
      return diagnostics(config.options, [PROBE], new Map([[PROBE, () => probe]]));
    };

    it('a message of the map, with its payload, passes', () => {
      expect(emitterErrors("emitter.toSession('s', 'round_voided', { roundId: 'r', cycleId: 'c', reason: 'session_terminated' });")).to.deep.equal([]);
    });

    it('a message name the map does not have fails', () => {
      expect(emitterErrors("emitter.toSession('s', 'round_void', { roundId: 'r', cycleId: 'c', reason: 'session_terminated' });").join('\n')).to.include('"round_void"');
    });

    it('a payload field the message does not carry fails, and so does a missing one', () => {
      expect(emitterErrors("emitter.toSession('s', 'round_voided', { roundId: 'r', cycle: 'c', reason: 'session_terminated' });").join('\n')).to.include("'cycle' does not exist");
      expect(emitterErrors("emitter.toSession('s', 'balance_update', { currency: 'EUR' });").join('\n')).to.include("'balanceMicro' is missing");
    });
  });
});
