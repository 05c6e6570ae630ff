import { exitOfWaitStatus, spawnerFrame, SpawnerEventLines } from "./spawner-protocol";

describe("the spawners' shared protocol", () => {
  it("frames a request as its little-endian length, then each field NUL-terminated", () => {
    expect([...spawnerFrame(["K", "7", "9"])]).toEqual([6, 0, 0, 0, 75, 0, 55, 0, 57, 0]);
    // Fields are UTF-8: the length counts bytes, not characters.
    expect(spawnerFrame(["S", "é"]).readUInt32LE(0)).toBe(5);
  });

  it("keeps an event line split across reads until its end comes", () => {
    const lines = new SpawnerEventLines();
    expect(lines.push("S 1 4242 17 18 -1\nX 1 0\nF 2 ")).toEqual([
      { kind: "S", id: "1", value: 4242, rest: ["17", "18", "-1"] },
      { kind: "X", id: "1", value: 0, rest: [] },
    ]);
    expect(lines.push("2 holder 0\n")).toEqual([
      { kind: "F", id: "2", value: 2, rest: ["holder", "0"] },
    ]);
    expect(lines.push("")).toEqual([]);
  });

  it("reads a wait status as an exit code or the signal that killed the command", () => {
    expect(exitOfWaitStatus(0)).toEqual({ code: 0, signal: null });
    expect(exitOfWaitStatus(3 << 8)).toEqual({ code: 3, signal: null });
    expect(exitOfWaitStatus(9)).toEqual({ code: null, signal: 9 });
  });
});
