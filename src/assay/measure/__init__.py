"""Statistics over stored judgments: agreement and calibration, bias audits, win rates
(raw and length-controlled), Bradley–Terry rankings, judge monitoring and bootstrap CIs."""
