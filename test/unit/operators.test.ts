import { expect } from 'chai';
import { ipAllowed } from '../../src/shared/game/operators/operators.js';

// contract 5.4: when the allow-list is non-empty the caller IP must match an entry (an
// address or a CIDR range); an empty list means only the signature is checked.

describe('ipAllowed (contract 5.4)', () => {
  const table: { name: string; list: string[]; ip: string; allowed: boolean }[] = [
    { name: 'empty list allows anyone', list: [], ip: '203.0.113.9', allowed: true },
    { name: 'empty list allows even an unparsable caller', list: [], ip: 'garbage', allowed: true },

    { name: 'v4 exact match', list: ['203.0.113.9'], ip: '203.0.113.9', allowed: true },
    { name: 'v4 neighbour', list: ['203.0.113.9'], ip: '203.0.113.10', allowed: false },
    { name: 'v4 in one of several entries', list: ['198.51.100.1', '203.0.113.9'], ip: '203.0.113.9', allowed: true },
    { name: 'v4 CIDR contains', list: ['10.0.0.0/8'], ip: '10.255.1.2', allowed: true },
    { name: 'v4 CIDR lower edge', list: ['192.168.4.0/22'], ip: '192.168.4.0', allowed: true },
    { name: 'v4 CIDR upper edge', list: ['192.168.4.0/22'], ip: '192.168.7.255', allowed: true },
    { name: 'v4 CIDR just outside', list: ['192.168.4.0/22'], ip: '192.168.8.0', allowed: false },
    { name: 'v4 /32', list: ['203.0.113.9/32'], ip: '203.0.113.9', allowed: true },
    { name: 'v4 /0 matches every v4', list: ['0.0.0.0/0'], ip: '8.8.8.8', allowed: true },

    { name: 'v6 exact match', list: ['2001:db8::1'], ip: '2001:db8::1', allowed: true },
    { name: 'v6 written out in full', list: ['2001:db8::1'], ip: '2001:0db8:0000:0000:0000:0000:0000:0001', allowed: true },
    { name: 'v6 neighbour', list: ['2001:db8::1'], ip: '2001:db8::2', allowed: false },
    { name: 'v6 CIDR contains', list: ['2001:db8::/32'], ip: '2001:db8:ffff::5', allowed: true },
    { name: 'v6 CIDR outside', list: ['2001:db8::/32'], ip: '2001:db9::1', allowed: false },
    { name: 'v6 loopback', list: ['::1'], ip: '::1', allowed: true },

    { name: 'v4 list does not match a v6 caller', list: ['127.0.0.1'], ip: '::1', allowed: false },
    { name: 'v6 list does not match a v4 caller', list: ['::1'], ip: '127.0.0.1', allowed: false },
    { name: 'v4 /0 does not match a native v6 caller', list: ['0.0.0.0/0'], ip: '2001:db8::1', allowed: false },

    // a dual-stack socket reports v4 callers as IPv4-mapped IPv6
    { name: 'IPv4-mapped caller matched by the v4 address', list: ['127.0.0.1'], ip: '::ffff:127.0.0.1', allowed: true },
    { name: 'IPv4-mapped caller matched by a v4 CIDR', list: ['127.0.0.0/8'], ip: '::ffff:127.0.0.1', allowed: true },
    { name: 'IPv4-mapped caller outside the v4 CIDR', list: ['10.0.0.0/8'], ip: '::ffff:127.0.0.1', allowed: false },
    { name: 'IPv4-mapped list entry matches the v4 caller', list: ['::ffff:10.1.2.3'], ip: '10.1.2.3', allowed: true },

    { name: 'garbage caller', list: ['127.0.0.1'], ip: 'not-an-ip', allowed: false },
    { name: 'empty caller', list: ['127.0.0.1'], ip: '', allowed: false },
    { name: 'out of range octet', list: ['0.0.0.0/0'], ip: '256.1.1.1', allowed: false },
    { name: 'caller with a port', list: ['127.0.0.1'], ip: '127.0.0.1:8080', allowed: false },
    { name: 'garbage list entry is skipped, not fatal', list: ['nonsense', '127.0.0.1'], ip: '127.0.0.1', allowed: true },
    { name: 'only garbage entries allow nobody', list: ['nonsense', '10.0.0.0/99'], ip: '10.0.0.1', allowed: false },
  ];

  for (const row of table) {
    it(`${row.name}: ${JSON.stringify(row.list)} vs ${JSON.stringify(row.ip)}`, () => {
      expect(ipAllowed(row.list, row.ip)).to.equal(row.allowed);
    });
  }
});
