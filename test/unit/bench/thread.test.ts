import { expect } from 'chai';
import { startThread } from '../../../bench/thread.js';

// The bench's load-generator threads (bench/thread.ts), as real worker threads.

const fixture = (name: string) => new URL(`./fixtures/${name}.ts`, import.meta.url);

describe('bench threads', () => {
  it('answers each request with its own reply, in order, and a refused request with its error', async () => {
    const thread = startThread<{ echo?: string; fail?: string }>(fixture('echo-thread'), null);
    try {
      const replies = await Promise.all([thread.ask({ echo: 'a' }), thread.ask({ echo: 'b' })]);
      expect(replies).to.deep.equal(['a', 'b']);
      await thread.ask({ fail: 'no' }).then(
        () => expect.fail('a refused request resolved'),
        (err: Error) => expect(err.message).to.equal('no'),
      );
      expect(await thread.ask({ echo: 'c' })).to.equal('c');
    } finally {
      await thread.worker.terminate();
    }
  });

  it('a thread that dies fails its open request and every later one, instead of crashing the run', async () => {
    const thread = startThread<string>(fixture('dying-thread'), null);
    try {
      for (const request of ['first', 'later']) {
        await thread.ask(request).then(
          () => expect.fail(`${request} resolved`),
          (err: Error) => expect(err.message, request).to.equal('the thread died'),
        );
      }
    } finally {
      await thread.worker.terminate();
    }
  });
});
