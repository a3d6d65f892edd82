"""Calendar generator 3 (docs/SPEC.md §4), written again from the SPEC's words alone, in plain
Python with no dependency: the layouts of the first three tickets of the fixed coordinates of
src/plan.rs (`known_answers_for_fixed_coordinates`, 2013 Année de la chance at 3 €), compared with
the ones pinned there. An auditor's check that the SPEC says enough to re-make a layout.

    python3 docs/audit/calendar_generator_3.py      # exit 0: the same bytes

The built-in definition's settings are written below (games/annee-chance.toml); the layout key
and the first prizes are the pinned ones (the prize shuffle is not re-made here).
"""
import hashlib
import math
import pathlib
import sys
M128 = (1 << 128) - 1
MULT = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645

class Pcg:
    def __init__(self, seed16):
        self.s = int.from_bytes(seed16, 'little') | 1
    def next(self):
        self.s = (self.s * MULT) & M128
        rot = self.s >> 122
        x = ((self.s >> 64) ^ self.s) & ((1 << 64) - 1)
        return ((x >> rot) | (x << (64 - rot))) & ((1 << 64) - 1)

class Bits:
    """bits(k), uniform(n), pick(weights) and chance(r) of SPEC §4 (the hive paragraph)."""
    def __init__(self, rng):
        self.rng, self.word, self.left = rng, 0, 0
    def bits(self, k):
        if self.left < k:
            self.word, self.left = self.rng.next(), 64
        v = self.word & ((1 << k) - 1)
        self.word >>= k; self.left -= k
        return v
    def bits64(self):
        v = self.word if self.left == 64 else self.rng.next()
        self.word, self.left = 0, 0
        return v
    def uniform(self, n):
        w = 32 if n <= 1 << 32 else 64
        while True:
            m = (self.bits(32) if w == 32 else self.bits64()) * n
            if m % (1 << w) >= (1 << w) % n:
                return m >> w
    def pick(self, weights):
        x = self.uniform(sum(weights))
        for i, w in enumerate(weights):
            if x < w: return i
            x -= w
        return len(weights) - 1
    def chance(self, r):
        return self.bits(32) < r

def table(entries):
    """The table draw of SPEC §4: exact Walker-Vose alias table of 2^k columns."""
    entries = [(v, w) for v, w in entries if w > 0]
    n = len(entries); k = 0
    while (1 << k) < n: k += 1
    N = 1 << k; W = sum(w for _, w in entries)
    s = [N * w for _, w in entries] + [0] * (N - n)
    cut = [W] * N; ali = list(range(N))
    small = [i for i in range(N) if s[i] < W]; large = [i for i in range(N) if s[i] >= W]
    while small and large:
        i = small.pop(); l = large[-1]
        cut[i] = s[i]; ali[i] = l; s[l] -= W - s[i]
        if s[l] < W: large.pop(); small.append(l)
    def draw(bits):
        c = bits.bits(k)
        if cut[c] == W: i = c
        elif cut[c] == 0: i = ali[c]
        else: i = c if bits.uniform(W) < cut[c] else ali[c]
        return entries[i][0]
    return draw

letters = "ABCDEFGH"
months = ["2","3","4","5","6","10","20","30","40","50","100","500","1000","10000","40000"]
clover_amts = ["3","4","6","10","20","30","50","100","1000"]
r = round(0.375 * 2**32)
n = len(letters)
lm = []
for a in range(n):
    for b in range(n):
        if a != b:
            w = r * n + 2 * (2**32 - r) if abs(a - b) == 1 else 2 * (2**32 - r)
            for j in range(len(months)):
                lm.append(((a, b, j), w))
g = 0
for _, w in lm: g = math.gcd(g, w)
lm = [(e, w // g) for e, w in lm]
losing = table(lm)
trip = [(a,b,c) for a in range(1,14) for b in range(1,14) for c in range(1,14) if len({a,b,c})==3]
wins = [t for t in trip if 13 in t]
twelves = [t for t in trip if 12 in t and 13 not in t]
plain = [t for t in trip if max(t) <= 11]

def plan(prize, maxm=4):
    # decompositions: clover none first then clover amounts ascending; month index lists lexicographic
    dec = []
    def sums(start, target, left, cur, clover):
        if target == 0:
            if cur or clover is not None: dec.append((tuple(cur), clover))
            return
        if left == 0: return
        for i in range(start, len(months)):
            a = int(months[i])
            if a > target: break
            sums(i, target - a, left - 1, cur + [i], clover)
    for c in [None] + list(range(len(clover_amts))):
        rest = prize - (int(clover_amts[c]) if c is not None else 0)
        if rest >= 0: sums(0, rest, maxm, [], c)
    weights = [0, 24, 12, 6, 3, 2, 1, 1]
    counts = []
    for comp in range(1, maxm + 2):
        forms = []
        for cl in [False, True]:
            ways = [d for d in dec if len(d[0]) == comp - cl and (d[1] is not None) == cl]
            if ways: forms.append(ways)
        if forms: counts.append((weights[comp], forms))
    return counts

def layout(prize, seed16):
    bits = Bits(Pcg(seed16))
    win = [None] * 12; clover = None
    if prize:
        counts = plan(prize)
        forms = counts[bits.pick([w for w, _ in counts])][1]
        form = forms[bits.uniform(len(forms))]
        months_d, clover = form[bits.uniform(len(form))]
        places = list(range(12))
        for i, a in enumerate(months_d):
            j = i + bits.uniform(12 - i)
            places[i], places[j] = places[j], places[i]
            win[places[i]] = a
    out = []
    for m in range(12):
        if win[m] is not None:
            s = letters[bits.uniform(n)]; out.append(f"{s}{s}:{months[win[m]]}")
        else:
            a, b, j = losing(bits); out.append(f"{letters[a]}{letters[b]}:{months[j]}")
    if clover is not None:
        t = wins[bits.uniform(len(wins))]; amt = clover_amts[clover]
    else:
        lst = twelves if bits.chance(r) else plain
        t = lst[bits.uniform(len(lst))]; amt = clover_amts[bits.uniform(len(clover_amts))]
    return "/".join(out) + "|" + "-".join(map(str, t)) + ":" + amt

def ticket_seed(layout_key, index):
    # SHA-256(layout key || ticket index, 8 bytes big-endian), first 16 bytes (SPEC §4).
    return hashlib.sha256(layout_key + index.to_bytes(8, 'big')).digest()[:16]

pinned = pathlib.Path(__file__).resolve().parents[2] / "src" / "plan.rs"
lines = pinned.read_text().splitlines()
at = next(i for i, l in enumerate(lines) if l.startswith("annee-chance 3: prize key"))
key = bytes.fromhex(lines[at].split("layout key ")[1])
prizes = [int(p) for p in lines[at + 1].split()[2:5]]
want = lines[at + 2:at + 5]
got = [layout(prize, ticket_seed(key, i)) for i, prize in enumerate(prizes)]
for g, w in zip(got, want):
    print(("same " if g == w else "DIFFERS ") + g)
sys.exit(0 if got == want else 1)
