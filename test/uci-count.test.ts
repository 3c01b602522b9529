/** The reference loader's UCICount, counted as the rows of a UCI-ordered table go by. */
import { expect } from 'chai';
import { StreamingUciCount } from '../loaders/uci-count';

describe('UCICount counted while a reference table loads', () => {
  it('counts each structure once per source, and only while one of its ids there is current', () => {
    const count = new StreamingUciCount();
    count.add(1, 10, 'CHEMBL112', 1);
    count.add(1, 10, 'CHEMBL113', 1); // a second id on the same structure
    count.add(101, 10, '3991', 0); // obsolete only
    count.add(101, 11, '4349', 1);
    count.add(22, 11, '1983', 1);
    count.add(22, 11, '1983', 0); // the same row again, now obsolete: the last one wins
    count.add(1, 12, 'CHEMBL1474977', 1);
    expect(count.counts()).to.deep.equal(
      new Map([
        [1, 2],
        [101, 1],
      ]),
    );
  });

  it('gives up when the rows are not in UCI order', () => {
    const count = new StreamingUciCount();
    count.add(1, 10, 'CHEMBL112', 1);
    count.add(1, 9, 'CHEMBL1', 1);
    count.add(1, 11, 'CHEMBL2', 1);
    expect(count.counts()).to.equal(undefined);
  });
});
