import unittest

from calc.stats import mean, median, spread


class StatsTest(unittest.TestCase):
    def test_mean(self) -> None:
        self.assertEqual(mean([2, 4, 6]), 4)

    def test_median_odd(self) -> None:
        self.assertEqual(median([3, 1, 2]), 2)

    def test_median_even(self) -> None:
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_spread(self) -> None:
        self.assertEqual(spread([5, 1, 9]), 8)

    def test_empty_lists_are_refused(self) -> None:
        for function in (mean, median, spread):
            with self.assertRaises(ValueError):
                function([])


if __name__ == "__main__":
    unittest.main()
